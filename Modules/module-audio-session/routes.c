/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#include <string.h>

#include <spa/param/param.h>
#include <spa/param/profile.h>
#include <spa/param/route.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>
#include <spa/utils/defs.h>
#include <spa/utils/result.h>
#include <spa/utils/string.h>

#include "routes.h"

/* Arbitrary, distinct; a local device answers with them during the call. */
#define SEQ_ALL		0x1a5e0001
#define SEQ_ACTIVE	0x1a5e0002
#define SEQ_SYNC	0x1a5e0003
#define SEQ_PROFILE	0x1a5e0004

/** The port type from a route's info struct (n, then n key/value strings, as ACP writes it). */
static void parse_port_type(const struct spa_pod *info, char *out, size_t size)
{
	struct spa_pod_parser prs;
	struct spa_pod_frame f;
	int32_t n = 0, i;

	out[0] = '\0';
	if (info == NULL || !spa_pod_is_struct(info))
		return;
	spa_pod_parser_pod(&prs, info);
	if (spa_pod_parser_push_struct(&prs, &f) < 0 || spa_pod_parser_get_int(&prs, &n) < 0)
		return;
	for (i = 0; i < n && i < 64; i++) {
		const char *key = NULL, *value = NULL;
		if (spa_pod_parser_get_string(&prs, &key) < 0 ||
		    spa_pod_parser_get_string(&prs, &value) < 0)
			return;
		if (key != NULL && value != NULL && spa_streq(key, "port.type")) {
			spa_scnprintf(out, size, "%s", value);
			return;
		}
	}
}

static bool parse_route(const struct spa_pod *param, struct as_route *route)
{
	const char *name = NULL;
	const struct spa_pod *info = NULL;

	spa_zero(*route);
	route->index = -1;
	route->device = -1;
	route->available = SPA_PARAM_AVAILABILITY_unknown;
	if (param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_ParamRoute))
		return false;
	if (spa_pod_parse_object(param, SPA_TYPE_OBJECT_ParamRoute, NULL,
			SPA_PARAM_ROUTE_index, SPA_POD_Int(&route->index),
			SPA_PARAM_ROUTE_direction, SPA_POD_Id(&route->direction),
			SPA_PARAM_ROUTE_name, SPA_POD_String(&name),
			SPA_PARAM_ROUTE_device, SPA_POD_OPT_Int(&route->device),
			SPA_PARAM_ROUTE_available, SPA_POD_OPT_Id(&route->available),
			SPA_PARAM_ROUTE_info, SPA_POD_OPT_Pod(&info)) < 0 || name == NULL)
		return false;
	spa_scnprintf(route->name, sizeof(route->name), "%s", name);
	parse_port_type(info, route->port_type, sizeof(route->port_type));
	return true;
}

static void on_result(void *data, int seq, int res, uint32_t type, const void *result)
{
	struct as_route_reader *r = data;
	struct as_route_set *set = &r->collecting;

	if (!r->pending)
		return;
	if (type == SPA_RESULT_TYPE_DEVICE_PARAMS && result != NULL) {
		const struct spa_result_device_params *p = result;
		struct as_route route;
		const char *name = NULL;

		if (seq == r->seq_profile && p->id == SPA_PARAM_Profile) {
			if (p->param != NULL && spa_pod_is_object_type(p->param, SPA_TYPE_OBJECT_ParamProfile) &&
			    spa_pod_parse_object(p->param, SPA_TYPE_OBJECT_ParamProfile, NULL,
					SPA_PARAM_PROFILE_name, SPA_POD_String(&name)) >= 0 && name != NULL) {
				spa_scnprintf(set->profile, sizeof(set->profile), "%s", name);
				set->has_profile = true;
			}
			return;
		}
		if (!parse_route(p->param, &route))
			return;
		if (seq == r->seq_all && p->id == SPA_PARAM_EnumRoute && set->n_all < AS_MAX_ROUTES)
			set->all[set->n_all++] = route;
		else if (seq == r->seq_active && p->id == SPA_PARAM_Route && set->n_active < AS_MAX_ROUTES)
			set->active[set->n_active++] = route;
	} else if (seq == r->seq_sync) {
		r->pending = false;
		r->ready(r->data, set);
	}
}

static void on_removed(struct spa_hook *hook)
{
	/* The device's owner went away first and cleaned its listeners. */
	struct as_route_reader *r = SPA_CONTAINER_OF(hook, struct as_route_reader, hook);
	r->hooked = false;
	r->pending = false;
}

static const struct spa_device_events reader_events = {
	SPA_VERSION_DEVICE_EVENTS,
	.result = on_result,
};

void as_route_reader_init(struct as_route_reader *r, struct spa_device *device,
		void (*ready) (void *data, const struct as_route_set *set), void *data)
{
	spa_zero(*r);
	r->device = device;
	r->ready = ready;
	r->data = data;
	if (device == NULL)
		return;
	spa_device_add_listener(device, &r->hook, &reader_events, r);
	r->hook.removed = on_removed;
	r->hooked = true;
}

void as_route_reader_read(struct as_route_reader *r)
{
	int res;

	if (!r->hooked)
		return;
	spa_zero(r->collecting);
	r->pending = true;

	r->seq_all = SEQ_ALL;
	res = spa_device_enum_params(r->device, SEQ_ALL, SPA_PARAM_EnumRoute, 0, UINT32_MAX, NULL);
	if (SPA_RESULT_IS_ASYNC(res))
		r->seq_all = res;
	r->seq_active = SEQ_ACTIVE;
	res = spa_device_enum_params(r->device, SEQ_ACTIVE, SPA_PARAM_Route, 0, UINT32_MAX, NULL);
	if (SPA_RESULT_IS_ASYNC(res))
		r->seq_active = res;
	r->seq_profile = SEQ_PROFILE;
	res = spa_device_enum_params(r->device, SEQ_PROFILE, SPA_PARAM_Profile, 0, 1, NULL);
	if (SPA_RESULT_IS_ASYNC(res))
		r->seq_profile = res;
	if (!r->pending || !r->hooked)
		return;
	r->seq_sync = SEQ_SYNC;
	res = spa_device_sync(r->device, SEQ_SYNC);
	if (SPA_RESULT_IS_ASYNC(res))
		r->seq_sync = res;
	else if (res < 0 && r->pending) {
		/* No sync: what came in during the calls is all there is. */
		r->pending = false;
		r->ready(r->data, &r->collecting);
	}
}

void as_route_reader_clear(struct as_route_reader *r)
{
	if (r->hooked) {
		r->hooked = false;
		r->hook.removed = NULL;
		spa_hook_remove(&r->hook);
	}
	r->pending = false;
}

/** The first route named `name` among `routes[0..n)`, or NULL. */
static const struct as_route *find_route(const struct as_route *routes, uint32_t n, const char *name)
{
	uint32_t i;
	for (i = 0; i < n; i++)
		if (spa_streq(routes[i].name, name))
			return &routes[i];
	return NULL;
}

uint32_t as_route_set_unavailable_names(const struct as_route_set *set, const char **names, uint32_t max)
{
	uint32_t i, count = 0;

	for (i = 0; i < set->n_all && count < max; i++) {
		const struct as_route *r = &set->all[i];
		if (r->available == SPA_PARAM_AVAILABILITY_no && find_route(set->all, i, r->name) == NULL)
			names[count++] = r->name;
	}
	for (i = 0; i < set->n_active && count < max; i++) {
		const struct as_route *r = &set->active[i];
		if (r->available == SPA_PARAM_AVAILABILITY_no &&
		    find_route(set->all, set->n_all, r->name) == NULL &&
		    find_route(set->active, i, r->name) == NULL)
			names[count++] = r->name;
	}
	return count;
}

const struct as_route *as_route_set_active(const struct as_route_set *set, uint32_t direction,
		int32_t profile_device)
{
	uint32_t i;
	for (i = 0; i < set->n_active; i++)
		if (set->active[i].direction == direction && set->active[i].device == profile_device)
			return &set->active[i];
	return NULL;
}
