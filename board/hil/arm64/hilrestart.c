// SPDX-License-Identifier: MIT
// hilrestart [COMMAND]: restarts the machine at once (no sync, no shutdown), with COMMAND as the
// restart command (reboot(2) with LINUX_REBOOT_CMD_RESTART2, as `systemctl reboot
// --reboot-argument=...` ends), or a plain restart without one (LINUX_REBOOT_CMD_RESTART).
// busybox's reboot cannot pass a command. For board/tryboot-test.sh's initramfs: arm64 only, no
// libc (built with -nostdlib -static), so that any aarch64 gcc builds it. Not in board/hil/tools,
// whose every .c the HIL builds with the host's cc (x86-64: no x0 register).
#define SYS_write 64
#define SYS_exit 93
#define SYS_reboot 142
#define MAGIC1 0xfee1deadL
#define MAGIC2 672274793L
#define CMD_RESTART 0x01234567L
#define CMD_RESTART2 0xa1b2c3d4L

static long syscall4(long n, long a, long b, long c, long d) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}

// The kernel's entry: sp holds argc, then argv.
__asm__(".global _start\n_start:\n mov x0, sp\n b start\n");

__attribute__((used, noreturn)) void start(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    static const char failed[] = "hilrestart: reboot(2) failed\n";
    if (argc > 1)
        syscall4(SYS_reboot, MAGIC1, MAGIC2, CMD_RESTART2, (long)argv[1]);
    else
        syscall4(SYS_reboot, MAGIC1, MAGIC2, CMD_RESTART, 0);
    syscall4(SYS_write, 2, (long)failed, sizeof(failed) - 1, 0);
    syscall4(SYS_exit, 1, 0, 0, 0);
    for (;;) {}
}
