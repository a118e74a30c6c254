// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the device's API handshake (HTW_IOC_API,
 * htw_api_negotiate() in src/htw_dev.c): the first ioctl on an open file,
 * which tells a library what the kernel offers.  The current version is
 * answered with every feature and ioctl; a request with an unknown
 * version, flags, reserved words or features is refused and left as it
 * was, so that a later version can give those fields a meaning.  The
 * ioctls themselves are tested from user space (tests/selftests).
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "htw_api.h"

static void htw_api_init(struct htw_api *api)
{
	memset(api, 0, sizeof(*api));
	api->api = HTW_API_VERSION;
}

static void htwheel_api_accepts_current_version(struct kunit *test)
{
	struct htw_api api;

	htw_api_init(&api);
	KUNIT_ASSERT_EQ(test, htw_api_negotiate(&api), 0);
	KUNIT_EXPECT_EQ(test, api.api, HTW_API_VERSION);
	KUNIT_EXPECT_EQ(test, api.features, HTW_FEATURES_ALL);
	KUNIT_EXPECT_TRUE(test, api.ioctls & (1ULL << _IOC_NR(HTW_IOC_API)));
	KUNIT_EXPECT_EQ(test, api.ioctls, HTW_IOCTLS_AFTER_API);
}

struct htw_api_bad_case {
	const char *name;
	void (*spoil)(struct htw_api *api);
};

static void spoil_version_zero(struct htw_api *api)
{
	api->api = 0;
}

static void spoil_version_next(struct htw_api *api)
{
	api->api = HTW_API_VERSION + 1;
}

static void spoil_flags(struct htw_api *api)
{
	api->flags = 1;
}

static void spoil_first_reserved(struct htw_api *api)
{
	api->reserved[0] = 1;
}

static void spoil_last_reserved(struct htw_api *api)
{
	api->reserved[ARRAY_SIZE(api->reserved) - 1] = 1ULL << 63;
}

static void spoil_unknown_feature(struct htw_api *api)
{
	api->features = ~HTW_FEATURES_ALL & -~HTW_FEATURES_ALL;
}

static const struct htw_api_bad_case htw_api_bad_cases[] = {
	{ "version 0", spoil_version_zero },
	{ "next version", spoil_version_next },
	{ "flags", spoil_flags },
	{ "reserved[0]", spoil_first_reserved },
	{ "last reserved", spoil_last_reserved },
	{ "unknown feature", spoil_unknown_feature },
};

static void htw_api_bad_case_desc(const struct htw_api_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(htw_api_bad, htw_api_bad_cases, htw_api_bad_case_desc);

/* Every malformed request is refused and the struct is left as it was. */
static void htwheel_api_rejects_bad_request(struct kunit *test)
{
	const struct htw_api_bad_case *c = test->param_value;
	struct htw_api api, before;

	htw_api_init(&api);
	c->spoil(&api);
	before = api;
	KUNIT_EXPECT_EQ(test, htw_api_negotiate(&api), -EINVAL);
	KUNIT_EXPECT_MEMEQ(test, &api, &before, sizeof(api));
}

static struct kunit_case htwheel_api_cases[] = {
	KUNIT_CASE(htwheel_api_accepts_current_version),
	KUNIT_CASE_PARAM(htwheel_api_rejects_bad_request, htw_api_bad_gen_params),
	{}
};

static struct kunit_suite htwheel_api_suite = {
	.name = "htwheel_api",
	.test_cases = htwheel_api_cases,
};

kunit_test_suite(htwheel_api_suite);
