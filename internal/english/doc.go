// Package english writes counts for people to read: "1 release",
// "2 releases". Messages, logs and reports share it so that none says
// "1 releases".
package english
