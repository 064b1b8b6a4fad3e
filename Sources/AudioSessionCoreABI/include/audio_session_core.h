/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * The one ABI between libpipewire-module-audio-session (C, Modules/) and its
 * Swift core (Sources/AudioSessionModuleCore). Events go in as typed calls,
 * effects come back through a table of callbacks the module provides. No
 * PipeWire type crosses it: ids are the graph's global ids, properties are
 * key/value C strings. The core never calls back into PipeWire itself.
 *
 * Threading: every function is called on PipeWire's main loop only; effects
 * are called synchronously from inside the call that caused them, in order.
 */
#ifndef AUDIO_SESSION_CORE_H
#define AUDIO_SESSION_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The core: an opaque Swift object, created by as_core_new, freed once by as_core_free. */
typedef struct as_core as_core;

/** One property, like struct spa_dict_item. Strings may be any bytes; the core repairs bad UTF-8. */
struct as_prop {
	const char *key;
	const char *value;
};

/** A property set, like struct spa_dict. */
struct as_props {
	const struct as_prop *items;
	uint32_t n_items;
};

enum as_stream_direction {
	AS_STREAM_OUTPUT = 0,	/**< Stream/Output/Audio: plays */
	AS_STREAM_INPUT = 1,	/**< Stream/Input/Audio: captures */
};

enum as_endpoint_kind {
	AS_ENDPOINT_SINK = 0,	/**< Audio/Sink */
	AS_ENDPOINT_SOURCE = 1,	/**< Audio/Source */
};

enum as_log_level {
	AS_LOG_ERROR = 1,
	AS_LOG_WARN = 2,
	AS_LOG_INFO = 3,
	AS_LOG_DEBUG = 4,
};

/** What the core asks the module to do. Every callback may be NULL (then it is skipped). */
struct as_core_effects {
#define AS_CORE_EFFECTS_VERSION 5
	uint32_t version;
	/** Stop scheduling the stream: pw_impl_node_set_active(node, false). */
	void (*pause)(void *data, uint32_t node_id);
	/** Schedule it again: pw_impl_node_set_active(node, true). */
	void (*resume)(void *data, uint32_t node_id);
	/** Ramp the module's gain on the stream to `gain` (1 = none) over `ramp_ms`;
	 * applied as softVolumes = user channelVolumes x gain. */
	void (*duck)(void *data, uint32_t node_id, float gain, uint32_t ramp_ms);
	/** softMute on (true) or off for the stream. */
	void (*silence)(void *data, uint32_t node_id, bool silenced);
	/** Write (value != NULL) or remove (value == NULL) a key of the
	 * `audio-session` metadata; `type` is a metadata type such as "Spa:String:JSON". */
	void (*publish)(void *data, uint32_t subject, const char *key, const char *type, const char *value);
	/** A line for the module's log topic. */
	void (*log)(void *data, enum as_log_level level, const char *message);
	/* Since version 2. */
	/** Call as_core_flush() soon, from the same loop, once it has handled the
	 * events at hand (before it waits for more). When set,
	 * property changes (client, stream, endpoint) are held until then and
	 * decided once on the settled properties; NULL decides each at once. */
	void (*schedule_flush)(void *data);
	/* Since version 3. */
	/** Call as_core_timer_fired(core, token) once, `milliseconds` from now, from the
	 * same loop; a token still pending is moved to the new time. Without it the core
	 * holds nothing for a grace period. */
	void (*schedule_timer)(void *data, uint64_t token, uint32_t milliseconds);
	/* Since version 4. */
	/** An interruption's fade (R42): ramp the same gain as `duck` to `gain` over `ms`,
	 * in steps that stay small while the stream is loud and reach silence once it is
	 * 40 dB or more down. A fade to 0 is answered, from a later turn of the loop and once
	 * the stream has taken the last step, with as_core_stream_faded_out(); a fade that is
	 * overtaken by another fade or duck of the stream, or whose stream goes, is not.
	 * Without it the core pauses at once and does not fade. */
	void (*fade)(void *data, uint32_t node_id, float gain, uint32_t ms);
	/* Since version 5. */
	/** R43: start (true) or stop listening to an output stream's level. Once the stream
	 * carries sound, from a later turn of the loop, the module calls
	 * as_core_stream_heard() (once per start); when it cannot listen, it calls it too, so
	 * the stream counts as sound. Without it every running output counts as sound. */
	void (*listen)(void *data, uint32_t node_id, bool on);
};

/**
 * Create the core. `args` are the module arguments after config overrides
 * (pw_properties of the module's SPA-JSON args; a nested value arrives as its
 * SPA-JSON text). On a bad argument returns NULL and writes a sentence naming
 * it into `error`.
 */
as_core *as_core_new(const struct as_props *args, const struct as_core_effects *effects, void *data,
		char *error, size_t error_size);
void as_core_free(as_core *core);
/** Decides the property changes held since schedule_flush() was called. */
void as_core_flush(as_core *core);
/** The timer asked for with schedule_timer() ran out. */
void as_core_timer_fired(as_core *core, uint64_t token);

/** The module is going away: the policy undoes its pauses through the resume effect, so
 * that no pause outlives it (R41). Call it just before as_core_free. */
void as_core_undo_pauses(as_core *core);

/** Publishes the current state again (global state, then every session's) through the
 * publish effect: for a metadata object created anew after the previous one was destroyed.
 * Decides held property changes first. */
void as_core_republish(as_core *core);

/** What a node is, by its `media.class`: the module watches streams and endpoints only. */
enum as_node_class {
	AS_NODE_OTHER = 0,		/**< nothing the policy is concerned with */
	AS_NODE_STREAM_OUTPUT = 1,	/**< a stream that plays */
	AS_NODE_STREAM_INPUT = 2,	/**< a stream that captures (a sink's monitor recorder too) */
	AS_NODE_SINK = 3,
	AS_NODE_SOURCE = 4,
};
/** Classifies a node by its `media.class` (NULL: AS_NODE_OTHER). Needs no core. */
enum as_node_class as_core_classify_node(const char *media_class);

/** Whether the core reads anything of a stream from `key` of its properties: a change
 * of the other keys (the daemon's formats, latencies, its driver's id) changes nothing
 * the core knows of the stream. The core's own list, written out here so that the
 * module asks it inline on each of a stream's fifty-odd keys (a test holds the two
 * equal). False for NULL. */
static inline bool as_core_reads_stream_key(const char *key)
{
	if (key == NULL)
		return false;
	switch (key[0]) {
	case 'a':
		return strncmp(key, "audio.session.", 14) == 0 ||
			strcmp(key, "application.name") == 0 ||
			strcmp(key, "application.process.binary") == 0 ||
			strcmp(key, "application.process.id") == 0;
	case 'm':
		return strcmp(key, "media.role") == 0;
	case 'n':
		return strcmp(key, "node.link-group") == 0;
	case 's':
		return strcmp(key, "stream.capture.sink") == 0 || strcmp(key, "stream.monitor") == 0;
	default:
		return false;
	}
}

/** What the daemon knows of a client's connection (never the client's own properties):
 * the policy grants call priority, alarm priority and the global switches on who this
 * makes the client. Strings are only borrowed for the call. */
struct as_client_identity {
	const char *executable;	/**< /proc/<pid>/exe of `pipewire.sec.pid`; NULL if unknown */
	const char *app_id;	/**< Flatpak application id from the instance's .flatpak-info; NULL if none */
	int64_t uid;		/**< `pipewire.sec.uid`, -1 if unknown */
	const char *access;	/**< `pipewire.access` as the daemon has it; NULL if unset */
	bool flatpak;		/**< the process runs in a Flatpak sandbox (its instance file exists) */
	/** What the daemon granted the client on its core object by the time the client was
	 * registered (pw_global_get_permissions: the access module gives an unrestricted
	 * client read and execute there before registration): -1 unknown, else 0 (none
	 * yet: the session manager decides later) or 1 (read and execute granted). */
	int8_t core_access;
	/** The daemon never takes `pipewire.access` from the client itself (PipeWire
	 * 0.3.82 and later); before, a client could bring its own value. */
	bool access_from_daemon;
};

/* Clients (one connection each). Properties are the full current set. */
/** A client connected; `identity` is what the module established for it (NULL: none). */
void as_core_client_added(as_core *core, uint32_t client_id, const struct as_props *props,
		const struct as_client_identity *identity);
void as_core_client_changed(as_core *core, uint32_t client_id, const struct as_props *props);
void as_core_client_removed(as_core *core, uint32_t client_id);
/** The client updated its own properties on its own connection (not another client
 * writing them): `props` is the update as it sent it. Global switch requests and MPRIS
 * reports are read from here only. */
void as_core_client_own_properties(as_core *core, uint32_t client_id, const struct as_props *props);

/* Streams: every Stream/Output/Audio and Stream/Input/Audio node, a sink's monitor
 * recorder included (the core decides that one is no session). */
void as_core_stream_added(as_core *core, uint32_t node_id, uint32_t client_id,
		enum as_stream_direction direction, const struct as_props *props);
void as_core_stream_changed(as_core *core, uint32_t node_id, const struct as_props *props);
/** The node entered (true) or left (false) the running state. */
void as_core_stream_running(as_core *core, uint32_t node_id, bool running);
/** The node was made active by someone other than the module (its owner: pw_stream,
 * pipewire-pulse on uncork), never by the module's own pause or resume effect. The core
 * reads it as an activation request when it holds the stream paused (R16). */
void as_core_stream_activated(as_core *core, uint32_t node_id);
/** The fade to silence asked for with the fade effect has reached the stream. Never
 * from inside an effect callback. */
void as_core_stream_faded_out(as_core *core, uint32_t node_id);
/** The output stream the listen effect asked about carried sound (or cannot be listened
 * to). Never from inside an effect callback. */
void as_core_stream_heard(as_core *core, uint32_t node_id);
void as_core_stream_removed(as_core *core, uint32_t node_id);

/* Endpoints: sinks and sources, node properties merged with their device's (the core adds
 * the port of the device's active route, from as_core_endpoint_routes). */
void as_core_endpoint_added(as_core *core, uint32_t node_id, enum as_endpoint_kind kind,
		const struct as_props *props);
void as_core_endpoint_changed(as_core *core, uint32_t node_id, const struct as_props *props);
/** Called from the node's destroy hook, while its links still exist. */
void as_core_endpoint_removed(as_core *core, uint32_t node_id);
void as_core_endpoint_mute_changed(as_core *core, uint32_t node_id, bool muted);

/** A route's availability (SPA_PARAM_AVAILABILITY_*). */
enum as_route_availability {
	AS_ROUTE_AVAILABILITY_UNKNOWN = 0,
	AS_ROUTE_AVAILABILITY_NO = 1,
	AS_ROUTE_AVAILABILITY_YES = 2,
};

/** What one read of a device's routes (EnumRoute: every port; Route: the active ones)
 * found for one endpoint of the device. Strings are only borrowed for the call. */
struct as_endpoint_route_facts {
	const char *name;		/**< the route active on the endpoint's profile device */
	const char *port_type;		/**< that route's info `port.type`; NULL or "" if it has none */
	enum as_route_availability available;	/**< that route's availability, as Route says */
	/** The names of the device's routes known to be unavailable: EnumRoute's, and active
	 * routes EnumRoute does not list. */
	const char *const *unavailable;
	uint32_t n_unavailable;
};
/** The endpoint's device's routes were read: whenever the device's params change (a jack
 * went in or out, the user chose a port), and before as_core_endpoint_added when they were
 * read before the node existed. Not called for an endpoint without an active route. The
 * core keeps each endpoint's port and decides what the change is: the port's loss (it
 * became unavailable, even when the device already switched to another), the user's
 * choice of another port (never a loss, R33), or the lost port's return. */
void as_core_endpoint_routes(as_core *core, uint32_t node_id, const struct as_endpoint_route_facts *facts);

/* Devices (sound cards, Bluetooth headsets), known to the core by the `device.id` of their
 * sinks and sources. */
/** The device's active profile (SPA_PARAM_Profile's name: "off", or "" when the device
 * answered none) was read and differs from the last one told: whenever the device's
 * params change. */
void as_core_device_profile(as_core *core, uint32_t device_id, const char *name);
/** The device is gone (its destroy hook), after its profile was told. */
void as_core_device_removed(as_core *core, uint32_t device_id);

/* Links: output node -> input node. */
void as_core_link_added(as_core *core, uint32_t link_id, uint32_t output_node, uint32_t input_node);
void as_core_link_removed(as_core *core, uint32_t link_id);

/** How many sessions and streams the core knows of (diagnostics, tests). */
uint32_t as_core_session_count(as_core *core);
uint32_t as_core_stream_count(as_core *core);

#ifdef __cplusplus
}
#endif

#endif /* AUDIO_SESSION_CORE_H */
