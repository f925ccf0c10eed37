// Package doclinks holds the test that keeps the repository's Markdown
// links resolving: every relative link of README.md, docs/ and the other
// documents names a file that exists and, for a Markdown file, an anchor
// one of its headings makes (GitHub's rule: lower case, punctuation
// dropped, spaces to hyphens, -1, -2 … for repeats). README's sections that
// moved to docs/ (issue 41) keep their headings, so old links still land
// one click from the text.
package doclinks
