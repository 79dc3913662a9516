/* LD_PRELOAD shim: let UML 6.1 set x86 xstate on a host whose xstate is larger
 * than UML's fixed buffer (AMX). The host rejects PTRACE_SETREGSET NT_X86_XSTATE
 * unless the length equals its full xstate size, so read the full state, overlay
 * UML's part, and write the full size back. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <elf.h>
long ptrace(enum __ptrace_request req, ...) {
	va_list ap; va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t); void *addr = va_arg(ap, void *); void *data = va_arg(ap, void *);
	va_end(ap);
	if (req == PTRACE_PEEKTEXT || req == PTRACE_PEEKDATA || req == PTRACE_PEEKUSER) {
		long ret;
		if (syscall(SYS_ptrace, req, pid, addr, &ret) < 0) return -1;
		return ret;
	}
	if (req == PTRACE_SETREGSET && (long)addr == NT_X86_XSTATE) {
		static char buf[65536];
		struct iovec *iov = data, g = { buf, sizeof buf };
		if (syscall(SYS_ptrace, PTRACE_GETREGSET, pid, NT_X86_XSTATE, &g) == 0 && g.iov_len > iov->iov_len) {
			memcpy(buf, iov->iov_base, iov->iov_len);
			return syscall(SYS_ptrace, PTRACE_SETREGSET, pid, NT_X86_XSTATE, &g);
		}
	}
	return syscall(SYS_ptrace, req, pid, addr, data);
}
