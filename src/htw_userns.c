// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: the user namespace budgets' ioctls, HTW_IOC_NS_LIMITS_GET and
 * HTW_IOC_NS_LIMITS_SET (the budgets themselves: htw_limits.c).
 *
 * A namespace is named by a descriptor of it, as setns(2) names one: an
 * open /proc/PID/ns/user (nsfs), or -1 for the caller's own.  Setting a
 * namespace's budget takes CAP_SYS_RESOURCE in the namespace's parent,
 * where its creator is: a container's root cannot raise its own budget,
 * and nobody can set the initial namespace's, whose limits are the module
 * parameters.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/proc_ns.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "htw_api.h"
#include "htw_compat.h"
#include "htw_limits.h"

/*
 * The user namespace @fd names, with a reference, or an ERR_PTR: -EBADF
 * for no open file, -EINVAL for one that is not a user namespace's.  The
 * module cannot call proc_ns_file(); an nsfs inode is known by its super
 * block's magic, which no other filesystem can take, and holds its
 * namespace in i_private.
 */
static struct user_namespace *htw_userns_get(int fd)
{
	struct user_namespace *ns = ERR_PTR(-EINVAL);
	struct ns_common *common;
	struct inode *inode;
	struct file *file;

	if (fd == -1)
		return get_user_ns(current_user_ns());
	file = fd < 0 ? NULL : fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	inode = file_inode(file);
	if (inode->i_sb->s_magic == NSFS_MAGIC) {
		common = get_proc_ns(inode);
		if (common->ops->type == CLONE_NEWUSER)
			ns = get_user_ns(container_of(common, struct user_namespace, ns));
	}
	fput(file);
	return ns;
}

/* Copy the request in and check what no call may set. */
static int htw_ns_limits_copy_in(struct htw_ns_limits *req, void __user *argp)
{
	if (copy_from_user(req, argp, sizeof(*req)))
		return -EFAULT;
	if (req->flags || req->pad || req->own)
		return -EINVAL;
	if (!htw_all_zero(req->used, ARRAY_SIZE(req->used)) ||
	    !htw_all_zero(req->reserved, ARRAY_SIZE(req->reserved)))
		return -EINVAL;
	return 0;
}

long htw_ioc_ns_limits_get(void __user *argp)
{
	struct htw_ns_limits req;
	struct user_namespace *ns;
	struct htw_ns_budget b;
	int i, ret;

	ret = htw_ns_limits_copy_in(&req, argp);
	if (ret)
		return ret;
	ns = htw_userns_get(req.userns_fd);
	if (IS_ERR(ns))
		return PTR_ERR(ns);
	ret = htw_ns_limits_get(ns, &b);
	put_user_ns(ns);
	if (ret)
		return ret;
	for (i = 0; i < HTW_NS_LIMITS; i++) {
		req.max[i] = b.max[i];
		req.used[i] = b.used[i];
	}
	req.own = b.own;
	return copy_to_user(argp, &req, sizeof(req)) ? -EFAULT : 0;
}

long htw_ioc_ns_limits_set(void __user *argp)
{
	unsigned long max[HTW_NS_LIMITS];
	struct htw_ns_limits req;
	struct user_namespace *ns;
	int i, ret;

	ret = htw_ns_limits_copy_in(&req, argp);
	if (ret)
		return ret;
	ns = htw_userns_get(req.userns_fd);
	if (IS_ERR(ns))
		return PTR_ERR(ns);
	/* Counters are longs: a larger maximum is no maximum. */
	for (i = 0; i < HTW_NS_LIMITS; i++)
		max[i] = min_t(u64, req.max[i], LONG_MAX);
	if (!ns->parent)
		ret = -EINVAL;
	else if (!ns_capable(ns->parent, CAP_SYS_RESOURCE))
		ret = -EPERM;
	else
		ret = htw_ns_limits_set(ns, max);
	put_user_ns(ns);
	return ret;
}
