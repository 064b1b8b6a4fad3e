/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#ifndef AUDIO_SESSION_ROUTES_H
#define AUDIO_SESSION_ROUTES_H

#include <stdbool.h>
#include <stdint.h>

#include <spa/monitor/device.h>
#include <spa/utils/hook.h>

/* Reading a device's routes (EnumRoute: every port with its availability;
 * Route: the port active on each profile device), the way a jack unplug shows
 * itself: the sink node stays, its port becomes unavailable and the device
 * switches routes (WirePlumber 0.4.13 switches them itself, after the
 * availability change). The same read takes the active profile (Profile): a
 * Bluetooth headset whose sink went either switched profile or turned "off".
 *
 * A device in the daemon is either local (a SPA plugin: its answers arrive
 * during the call) or exported by a client (WirePlumber's ALSA cards, test
 * fixtures: its answers arrive later over the protocol). The reader handles
 * both: it asks for both params, then for a sync, and reports the set once the
 * sync comes back. A newer read supersedes one still in flight. */

#define AS_ROUTE_NAME_MAX	96
#define AS_ROUTE_TYPE_MAX	32
#define AS_MAX_ROUTES		32

struct as_route {
	int32_t index;
	int32_t device;		/**< profile device (Route only; -1 in EnumRoute) */
	uint32_t direction;	/**< SPA_DIRECTION_INPUT / OUTPUT */
	uint32_t available;	/**< SPA_PARAM_AVAILABILITY_* */
	char name[AS_ROUTE_NAME_MAX];
	char port_type[AS_ROUTE_TYPE_MAX];	/**< info "port.type", or empty */
};

struct as_route_set {
	struct as_route all[AS_MAX_ROUTES];	/**< EnumRoute */
	uint32_t n_all;
	struct as_route active[AS_MAX_ROUTES];	/**< Route */
	uint32_t n_active;
	bool has_profile;			/**< Profile answered */
	char profile[AS_ROUTE_NAME_MAX];	/**< the active profile's name */
};

struct as_route_reader {
	struct spa_device *device;
	struct spa_hook hook;
	bool hooked;
	bool pending;
	int seq_all, seq_active, seq_profile, seq_sync;
	struct as_route_set collecting;
	void (*ready) (void *data, const struct as_route_set *set);
	void *data;
};

void as_route_reader_init(struct as_route_reader *r, struct spa_device *device,
		void (*ready) (void *data, const struct as_route_set *set), void *data);
/** Reads both params; `ready` runs when they are in (perhaps before this returns). */
void as_route_reader_read(struct as_route_reader *r);
void as_route_reader_clear(struct as_route_reader *r);

/** Room for every name as_route_set_unavailable_names() can give. */
#define AS_MAX_UNAVAILABLE_ROUTES	(2 * AS_MAX_ROUTES)

/** The names of the routes known to be unavailable, each once: EnumRoute's that
 * say so, then Route's that say so and are not in EnumRoute (EnumRoute's word
 * wins). Points into `set`; returns how many were written to `names`. */
uint32_t as_route_set_unavailable_names(const struct as_route_set *set, const char **names, uint32_t max);
/** The active output or input route on a profile device, or NULL. */
const struct as_route *as_route_set_active(const struct as_route_set *set, uint32_t direction,
		int32_t profile_device);

#endif
