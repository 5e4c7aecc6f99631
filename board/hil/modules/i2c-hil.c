// SPDX-License-Identifier: GPL-2.0
/*
 * i2c-hil: a plain-I2C test adapter for jukebox's hardware-in-the-loop tests.
 *
 * i2c-stub only speaks SMBus, but the display drivers write plain I2C messages (write(2) on
 * /dev/i2c-N), so the tests need an adapter with master_xfer. Devices "answer" at the addresses in
 * `addrs` (others NAK with -ENXIO, as an empty bus does); every message is appended as one text
 * line to /sys/kernel/debug/i2c-hil/log:
 *     27 W 0c 08 ...      a write to 0x27 and its bytes (hex)
 *     3c R 1              a read of 1 byte (answered with zeros)
 * Writing anything to the log file empties it.
 *
 * A device may also have 16-bit registers, as fuel gauges do (/sys/kernel/debug/i2c-hil/regs,
 * lines "AA RR VVVV" in hex: address, register, value; "clear" forgets them all). A write's first
 * byte to such an address selects the register; a read returns the selected register's value,
 * high byte first (bytes past two are zeros), as a MAX17048 answers.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/i2c.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#define HIL_LOG_SIZE (4 << 20)

static unsigned short addrs[8] = { 0x27, 0x3c, 0x36 };
static int naddrs = 3;
module_param_array(addrs, ushort, &naddrs, 0444);
MODULE_PARM_DESC(addrs, "7-bit addresses that acknowledge (default 0x27,0x3c,0x36)");

#define HIL_REGS 32
/* Registers set through regs; used: the slot holds one. */
static struct hil_reg {
	bool used;
	u16 addr;
	u8 reg;
	u16 value;
} hil_regs[HIL_REGS];
/* Each address's selected register (the last write's first byte), by the address's low 7 bits. */
static u8 hil_pointer[128];

static char *hil_log;
static size_t hil_len;
static bool hil_full;
static DEFINE_MUTEX(hil_lock);
static struct dentry *hil_dir;

static bool hil_present(u16 addr)
{
	int i;

	for (i = 0; i < naddrs; i++)
		if (addrs[i] == addr)
			return true;
	return false;
}

/* Appends to the log under hil_lock; a full log is marked once and stops growing. */
static void hil_append(const char *fmt, ...)
{
	va_list ap;
	size_t room = HIL_LOG_SIZE - hil_len;
	int n;

	if (hil_full || room < 64) {
		hil_full = true;
		return;
	}
	va_start(ap, fmt);
	n = vscnprintf(hil_log + hil_len, room, fmt, ap);
	va_end(ap);
	hil_len += n;
}

/* The register at addr/reg, or NULL; under hil_lock. */
static struct hil_reg *hil_find(u16 addr, u8 reg)
{
	int i;

	for (i = 0; i < HIL_REGS; i++)
		if (hil_regs[i].used && hil_regs[i].addr == addr && hil_regs[i].reg == reg)
			return &hil_regs[i];
	return NULL;
}

static int hil_xfer(struct i2c_adapter *adap, struct i2c_msg *msgs, int num)
{
	int i, j;

	mutex_lock(&hil_lock);
	for (i = 0; i < num; i++) {
		struct i2c_msg *m = &msgs[i];

		if (!hil_present(m->addr)) {
			mutex_unlock(&hil_lock);
			return -ENXIO;
		}
		if (m->flags & I2C_M_RD) {
			struct hil_reg *r = hil_find(m->addr, hil_pointer[m->addr & 0x7f]);

			memset(m->buf, 0, m->len);
			if (r && m->len >= 1)
				m->buf[0] = r->value >> 8;
			if (r && m->len >= 2)
				m->buf[1] = r->value & 0xff;
			hil_append("%02x R %u\n", m->addr, m->len);
		} else {
			if (m->len >= 1)
				hil_pointer[m->addr & 0x7f] = m->buf[0];
			hil_append("%02x W", m->addr);
			for (j = 0; j < m->len; j++)
				hil_append(" %02x", m->buf[j]);
			hil_append("\n");
		}
	}
	mutex_unlock(&hil_lock);
	return num;
}

static u32 hil_func(struct i2c_adapter *adap)
{
	return I2C_FUNC_I2C | I2C_FUNC_SMBUS_EMUL;
}

static const struct i2c_algorithm hil_algo = {
	.master_xfer = hil_xfer,
	.functionality = hil_func,
};

static struct i2c_adapter hil_adapter = {
	.owner = THIS_MODULE,
	.algo = &hil_algo,
	.name = "jukebox-hil",
};

static ssize_t hil_read(struct file *f, char __user *buf, size_t count, loff_t *pos)
{
	ssize_t n;

	mutex_lock(&hil_lock);
	n = simple_read_from_buffer(buf, count, pos, hil_log, hil_len);
	mutex_unlock(&hil_lock);
	return n;
}

static ssize_t hil_write(struct file *f, const char __user *buf, size_t count, loff_t *pos)
{
	mutex_lock(&hil_lock);
	hil_len = 0;
	hil_full = false;
	mutex_unlock(&hil_lock);
	return count;
}

static const struct file_operations hil_fops = {
	.owner = THIS_MODULE,
	.read = hil_read,
	.write = hil_write,
	.llseek = default_llseek,
};

/* "AA RR VVVV" sets a register (a free slot, or the one it had); "clear" forgets them all. */
static ssize_t hil_regs_write(struct file *f, const char __user *buf, size_t count, loff_t *pos)
{
	char line[32];
	unsigned int addr, reg, value;
	struct hil_reg *r;
	int i;

	if (count == 0 || count >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, buf, count))
		return -EFAULT;
	line[count] = 0;
	mutex_lock(&hil_lock);
	if (!strncmp(line, "clear", 5)) {
		memset(hil_regs, 0, sizeof(hil_regs));
		mutex_unlock(&hil_lock);
		return count;
	}
	if (sscanf(line, "%x %x %x", &addr, &reg, &value) != 3 || addr > 0x7f || reg > 0xff || value > 0xffff) {
		mutex_unlock(&hil_lock);
		return -EINVAL;
	}
	r = hil_find(addr, reg);
	for (i = 0; !r && i < HIL_REGS; i++)
		if (!hil_regs[i].used)
			r = &hil_regs[i];
	if (!r) {
		mutex_unlock(&hil_lock);
		return -ENOSPC;
	}
	r->used = true;
	r->addr = addr;
	r->reg = reg;
	r->value = value;
	mutex_unlock(&hil_lock);
	return count;
}

static const struct file_operations hil_regs_fops = {
	.owner = THIS_MODULE,
	.write = hil_regs_write,
	.llseek = default_llseek,
};

static int __init hil_init(void)
{
	int ret;

	hil_log = vmalloc(HIL_LOG_SIZE);
	if (!hil_log)
		return -ENOMEM;
	ret = i2c_add_adapter(&hil_adapter);
	if (ret) {
		vfree(hil_log);
		return ret;
	}
	hil_dir = debugfs_create_dir("i2c-hil", NULL);
	debugfs_create_file("log", 0600, hil_dir, NULL, &hil_fops);
	debugfs_create_file("regs", 0200, hil_dir, NULL, &hil_regs_fops);
	return 0;
}

static void __exit hil_exit(void)
{
	debugfs_remove_recursive(hil_dir);
	i2c_del_adapter(&hil_adapter);
	vfree(hil_log);
}

module_init(hil_init);
module_exit(hil_exit);
MODULE_DESCRIPTION("Plain-I2C test adapter that logs every message (jukebox HIL tests)");
MODULE_LICENSE("GPL");
