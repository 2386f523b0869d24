module pqbench/stacks/go

go 1.26.0

require (
	filippo.io/mldsa v1.0.0
	github.com/cloudflare/circl v1.6.5
	golang.org/x/sys v0.50.0
)
