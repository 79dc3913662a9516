package chain

// The BPF object is built from bpf/chain.bpf.c with Debian's clang and
// libbpf-dev headers (apt-get install clang llvm libbpf-dev); the
// generated chain_bpfel.go and chain_bpfel.o are committed, so building
// memdiag needs no clang.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -tags linux -target bpfel -type add_key -type evict_key -type task_key -type refault_key -type pages_val -type stall_val chain bpf/chain.bpf.c -- -I/usr/include -O2 -g -Wall -Werror
