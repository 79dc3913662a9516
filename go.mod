module github.com/memdiag/memdiag

go 1.26.8

require (
	github.com/MakeNowJust/heredoc v1.0.0
	github.com/google/go-cmp v0.7.0
	github.com/jedib0t/go-pretty/v6 v6.9.2
	github.com/mattn/go-isatty v0.0.24
	github.com/spf13/cobra v1.10.2
	golang.org/x/sys v0.50.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/text v0.22.0 // indirect
)
