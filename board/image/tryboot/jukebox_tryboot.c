// SPDX-License-Identifier: GPL-2.0
/*
 * jukebox_tryboot: hands `reboot '0 tryboot'` on to the Raspberry Pi firmware, which Debian's
 * (mainline) kernel does not. The Raspberry Pi kernel does it in drivers/firmware/raspberrypi.c
 * ("firmware: raspberrypi: Add support for tryonce reboot flag", 2020): when the restart command
 * holds the word "tryboot", it sets the firmware's one-shot reboot flag over the VideoCore
 * mailbox, and the firmware reads tryboot.txt instead of config.txt for the next start only.
 * jukebox's A/B updates (its docs/IMAGE.md, "A/B updates with RAUC") start a new root slot so.
 *
 * Loaded on every box (modules-load.d): where the device tree has no Raspberry Pi firmware (QEMU's
 * virt machine, a PC) it says so once and leaves every restart alone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/of.h>
#include <linux/reboot.h>
#include <linux/string.h>
#include <soc/bcm2835/raspberrypi-firmware.h>

/* The Raspberry Pi kernel's RPI_FIRMWARE_SET_REBOOT_FLAGS and its "tryboot" bit: not among
 * mainline's tags. */
#define JUKEBOX_SET_REBOOT_FLAGS 0x00038064
#define JUKEBOX_REBOOT_FLAG_TRYBOOT 0x1
#define JUKEBOX_FIRMWARE "raspberrypi,bcm2835-firmware"

/* Whether cmd holds the word "tryboot", between spaces or the string's ends ("0 tryboot"). */
static bool jukebox_has_tryboot(const char *cmd)
{
	static const char word[] = "tryboot";
	const size_t n = sizeof(word) - 1;
	const char *p = cmd;

	while ((p = strstr(p, word))) {
		if ((p == cmd || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
		p += n;
	}
	return false;
}

/* Runs before devices are shut down (kernel_restart_prepare), so the mailbox still answers. The
 * firmware is looked up here, not at load: its driver may have been probed after this module.
 * A tryboot that cannot be passed on is an error (the update will not be tried): logged as one,
 * which a console at kernel.printk 4 (warnings hidden) still shows. */
static int jukebox_tryboot_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	const char *cmd = data;
	struct device_node *np;
	struct rpi_firmware *fw;
	u32 flags = JUKEBOX_REBOOT_FLAG_TRYBOOT;
	int ret;

	if (action != SYS_RESTART || !cmd || !jukebox_has_tryboot(cmd))
		return NOTIFY_DONE;
	np = of_find_compatible_node(NULL, NULL, JUKEBOX_FIRMWARE);
	if (!np) {
		pr_err("restart command '%s': no Raspberry Pi firmware, tryboot flag not set\n", cmd);
		return NOTIFY_DONE;
	}
	fw = rpi_firmware_get(np);
	of_node_put(np);
	if (!fw) {
		pr_err("restart command '%s': Raspberry Pi firmware not ready, tryboot flag not set\n", cmd);
		return NOTIFY_DONE;
	}
	ret = rpi_firmware_property(fw, JUKEBOX_SET_REBOOT_FLAGS, &flags, sizeof(flags));
	rpi_firmware_put(fw);
	if (ret)
		pr_err("restart command '%s': setting the firmware's reboot flags failed (%d)\n", cmd, ret);
	else
		pr_info("restart command '%s': firmware reboot flags set to 0x%x (tryboot)\n", cmd,
			JUKEBOX_REBOOT_FLAG_TRYBOOT);
	return NOTIFY_DONE;
}

static struct notifier_block jukebox_tryboot_nb = {
	.notifier_call = jukebox_tryboot_notify,
};

static int __init jukebox_tryboot_init(void)
{
	struct device_node *np = of_find_compatible_node(NULL, NULL, JUKEBOX_FIRMWARE);

	if (np)
		pr_info("Raspberry Pi firmware found: a restart command with 'tryboot' sets its tryboot flag\n");
	else
		pr_info("no Raspberry Pi firmware in the device tree (not a Pi): restarts are left alone\n");
	of_node_put(np);
	return register_reboot_notifier(&jukebox_tryboot_nb);
}

static void __exit jukebox_tryboot_exit(void)
{
	unregister_reboot_notifier(&jukebox_tryboot_nb);
}

module_init(jukebox_tryboot_init);
module_exit(jukebox_tryboot_exit);
MODULE_DESCRIPTION("Pass reboot '0 tryboot' on to the Raspberry Pi firmware (jukebox A/B updates)");
MODULE_LICENSE("GPL");
