// Package ledger is the per-person privacy ledger: every release of labels
// meant to be counted is recorded, before a byte of it is written, as a
// row of an append-only CSV, and composed per person with
// pets.Compose, so that each row states an upper bound on the label-DP
// cost of every person the release covers, over all their releases
// (Section 2 of "Auditing Privacy Mechanisms via Label Inference
// Attacks" defines the mechanisms; composition is basic, Dwork–Rothblum–
// Vadhan advanced, and privacy-loss-distribution composition).
//
// The API: Open a ledger, take its Keys (created with it) to compute the
// person keys of a release, Plan a release (what it would cost, under a
// budget), Record it, Abort it if its file could not be written, read
// Rows or the whole State (totals per history class, every file verified).
//
// # Files
//
// A ledger is three files, never shipped with a release (the user's
// default is DefaultPath; see README for why one default per user):
// privacy_ledger.csv, one row per release (and one more for a release
// aborted), mode 0640; privacy_ledger.key, a random 32-byte HMAC-SHA-256
// key created with the ledger and the chain's head (its length and last
// MAC, under a MAC of its own, rewritten with every row), mode 0600 (a
// wider mode is refused); and
// privacy_ledger.people, every person the ledger has seen in history
// classes (people.go). Everything stored is keyed: whoever holds the ledger
// and a release but not the key can neither test guesses of labels or
// people against it nor edit it unnoticed.
//
// # People
//
// A person is known by one rule per ledger (Identity): an id column's
// value, or the values of a row's features (identical rows are one
// person: over-counting distinct people, the safe direction). A ledger of
// rule id is bound to the id column of its first release, its name and
// its type (IDColumn): a release keyed by another column is refused. A release
// charges a person for each of its rows: m rows through independent draws
// (rr, or rows in different bags) are m steps of ε, composed exactly; rows
// in one draw (one bag) are one step of m·ε (pets.Step.Group). A release
// is recorded with every row's person key, in any order.
//
// # Rows
//
// Each CSV row reports the worst covered person: columns, in order:
//
//	id                  release id (unique; an aborted release repeats it)
//	status              released | aborted
//	input               the labelled file released
//	labels              Keys.Labels: hmac-sha256: + hex HMAC of the row count
//	                    and the labels (reuse checks; useless without the key)
//	identity            id | features | standardized-features: who a person is
//	id_column, id_type  identity id: the id column's name, and integer |
//	                    text (one per ledger: its first release's); empty
//	                    otherwise
//	rows, people        release rows; distinct people among them
//	mechanism, k        none | bot | rr | llp | llp_lap | llp_geom | rr_prior;
//	                    bag size (0 outside the LLP family)
//	epsilon             label-DP ε of this release per row (inf for none and
//	                    llp, 0 for bot)
//	noise               secure (crypto/rand) | seeded (explicit seed: whoever
//	                    learns it can undo the release) | seeded-simulation
//	                    (seeded from a config inside a measurement run)
//	seed                decimal uint64 seed; empty for secure (read it as a
//	                    string: pandas turns large seeds into floats)
//	path, sha256        release file and hex SHA-256 of its bytes
//	releases            the worst covered person's releases (this one
//	                    included)
//	people_at_worst     covered people whose eps_total equals the worst
//	eps_total           min of the bounds below: that person is
//	                    (eps_total, δ')-label-DP over all releases so far
//	eps_total_basic     Σ ε over the person's steps (pets.Composition.Basic),
//	                    (ε, 0)-DP
//	eps_total_drv       Dwork–Rothblum–Vadhan √(2 ln(1/δ')Σε²) + Σε(e^ε−1)
//	eps_total_drv_quad  the same with the mean loss bounded by 2ε² (the form
//	                    of Roth and Smith's lecture notes on adaptive data
//	                    analysis): √(2 ln(1/δ')Σε²) + Σ2ε²
//	eps_total_pld       privacy loss distribution composition (package pets),
//	                    an upper bound within pets.Composition.PLDError
//	                    (≤ 1e-4 per rounding) of the exact optimal ε of these
//	                    mechanisms
//	delta_prime         δ' of the totals: the ledger's, fixed by its first
//	                    row, in (0, MaxDeltaPrime]
//	time                RFC 3339 UTC with nanoseconds
//	reason              why an aborted release was aborted; empty otherwise
//	mac                 hex HMAC-SHA-256 under the key of the previous row's
//	                    mac and this line up to it: the chain
//
// Once a person is in a release that is not DP (llp, none), every total of
// that person is inf from then on. Infinite values are written "inf",
// which pandas.read_csv reads as a float.
//
// # Integrity
//
// The rows form a MAC chain, the people file names the last row, and the
// key file keeps the chain's head: a row edited, inserted or removed, a
// CSV lost or truncated, a people file older or newer than the CSV, and
// the CSV and the people file truncated together (consistent with each
// other, shorter than the head) are refused (naming the first bad row or
// the files), never restarted. What no file of the ledger can show is all
// three restored from one older backup: a release file names its row
// (Keys.ReleaseTag; CheckReleases says whether the ledger still holds it),
// and a head kept elsewhere (State.Head) shows it too. Write order under one exclusive flock: the
// people file gets the release (and the row's whole line), then the row is
// appended to the CSV; a crash between the two is rolled forward by the
// next writer from the people file. A budget (Options.Budget) refuses a
// release that would take any person above it, writing nothing. An
// aborted release keeps its charge. Ledgers of earlier formats are
// refused with instructions (kept, never changed): they cannot be
// verified; the previous one kept no head and did not bind the id
// column, and the one before charged several rows of one person once.
package ledger
