package gate

import "github.com/memdiag/memdiag/internal/format"

// Formats lists the formats a gate report is written in
// (report/gatereport.Render); github is GitHub Actions workflow commands
// (::error …).
var Formats = []format.Format{format.Table, format.JSON, format.Markdown, format.GitHub}
