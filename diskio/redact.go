package diskio

import "github.com/memdiag/memdiag/redact"

// Redacted replaces a secret in a redacted command line.
//
// Deprecated: use redact.Redacted.
const Redacted = redact.Redacted

// RedactCmdline is [redact.Cmdline], memdiag's one redaction policy.
//
// Deprecated: use redact.Cmdline.
func RedactCmdline(args []string) string { return redact.Cmdline(args) }
