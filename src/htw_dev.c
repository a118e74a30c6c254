// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: the /dev/htwheel misc device.
 *
 * Every open() is its own timer instance; its state lives in
 * file->private_data.  The ioctl switch only dispatches: each command has
 * one short handler that copies its argument in, validates all of it, and
 * only then takes a lock.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "htw_api.h"

#define HTW_NAME	"htwheel"

/**
 * struct htw_file - one open file, one timer instance
 * @lock:     serialises the handshake and setup
 * @api_done: the handshake succeeded; set once under @lock, read without it
 */
struct htw_file {
	struct mutex lock;
	bool api_done;
};

static bool htw_reserved_clear(const __u64 *reserved, size_t n)
{
	while (n--)
		if (reserved[n])
			return false;
	return true;
}

/*
 * Validate a handshake request and fill in the answer.  Pure, so that the
 * KUnit suite can drive it directly.
 */
int htw_api_negotiate(struct htw_api *api)
{
	if (api->api != HTW_API_VERSION || api->flags)
		return -EINVAL;
	if (api->ioctls ||
	    !htw_reserved_clear(api->reserved, ARRAY_SIZE(api->reserved)))
		return -EINVAL;
	if (api->features & ~HTW_FEATURES_ALL)
		return -EINVAL;

	api->features = HTW_FEATURES_ALL;
	api->ioctls = HTW_IOCTLS_AFTER_API;
	return 0;
}
EXPORT_SYMBOL_NS_GPL(htw_api_negotiate, HTWHEEL);

static int htw_api(struct htw_file *hf, void __user *argp)
{
	struct htw_api api;
	int ret;

	if (copy_from_user(&api, argp, sizeof(api)))
		return -EFAULT;
	ret = htw_api_negotiate(&api);
	if (ret)
		return ret;

	mutex_lock(&hf->lock);
	if (hf->api_done) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (copy_to_user(argp, &api, sizeof(api))) {
		ret = -EFAULT;
		goto out_unlock;
	}
	/* Pairs with the READ_ONCE() in htw_ioctl(). */
	WRITE_ONCE(hf->api_done, true);
out_unlock:
	mutex_unlock(&hf->lock);
	return ret;
}

static long htw_ioctl(struct file *file, unsigned int cmd, unsigned long parm)
{
	struct htw_file *hf = file->private_data;
	void __user *argp = (void __user *)parm;

	if (cmd == HTW_IOC_API)
		return htw_api(hf, argp);
	if (_IOC_TYPE(cmd) != HTW_IOC_MAGIC)
		return -ENOIOCTLCMD;
	if (!READ_ONCE(hf->api_done))
		return -EBADFD;

	switch (cmd) {
	default:
		return -ENOIOCTLCMD;
	}
}

static int htw_open(struct inode *inode, struct file *file)
{
	struct htw_file *hf;

	hf = kzalloc(sizeof(*hf), GFP_KERNEL_ACCOUNT);
	if (!hf)
		return -ENOMEM;
	mutex_init(&hf->lock);
	file->private_data = hf;
	return nonseekable_open(inode, file);
}

static int htw_release(struct inode *inode, struct file *file)
{
	struct htw_file *hf = file->private_data;

	mutex_destroy(&hf->lock);
	kfree(hf);
	return 0;
}

static const struct file_operations htw_fops = {
	.owner		= THIS_MODULE,
	.open		= htw_open,
	.release	= htw_release,
	.unlocked_ioctl	= htw_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice htw_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= HTW_NAME,
	.fops		= &htw_fops,
	.mode		= 0666,
};

int htw_dev_register(void)
{
	BUILD_BUG_ON(sizeof(struct htw_api) != 64);
	return misc_register(&htw_misc);
}

void htw_dev_unregister(void)
{
	misc_deregister(&htw_misc);
}
