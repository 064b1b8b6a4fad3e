/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <spa/utils/result.h>
#include <spa/utils/string.h>
#include <spa/utils/json.h>
#include <spa/pod/iter.h>
#include <spa/param/param.h>
#include <spa/param/props.h>

#include <pipewire/impl.h>
#include <pipewire/extensions/metadata.h>
#include <pipewire/extensions/client-node.h>

#include "audio_session_core.h"
#include "module-audio-session/gains.h"
#include "module-audio-session/identity.h"
#include "module-audio-session/probes.h"
#include "module-audio-session/routes.h"

/** \page page_module_audio_session PipeWire Module: Audio Session
 *
 * Apple's audio-session model (AVAudioSession) for PipeWire. Every client
 * declares what its audio is for (a category such as `playback`, a mode, options
 * such as `duckOthers`), with client or stream properties `audio.session.*`;
 * streams that declare nothing get a declaration from their `media.role`. The
 * policy then interrupts, ducks and silences streams, treats device add/remove
 * as route changes, and pauses streams that played through a private output
 * (headphones) when it goes away, before a single sample reaches another sink.
 *
 * The decisions are made by a Swift core linked into this module; this file
 * observes the graph inside the daemon, hands what it sees to the core, and runs
 * the core's effects:
 *
 * - pause and resume: `pw_impl_node_set_active()` on the stream's node;
 * - ducking and silencing: the stream's `softVolumes` / `softMute`, always the
 *   user's `channelVolumes` times the module's gain. The user's `volume`,
 *   `channelVolumes` and `mute` are never written;
 * - notifications: the metadata object `audio-session`, which only this module
 *   can write (clients get read and execute permission on it). A client can
 *   still destroy it (a registry destroy needs no write permission): the module
 *   then creates it again and writes the current state into it.
 *
 * Sinks and sources are described to the core with their device's properties.
 * A jack pulled out keeps the sink node: the module reads the card's
 * EnumRoute/Route params whenever the device's params change and reports, for
 * each of the card's endpoints, the active route (name, port type,
 * availability) and the routes that are unavailable. The core keeps each
 * endpoint's port and decides what a change is: the port's loss, the user's
 * choice of another port (never a loss) or the port's return.
 *
 * The module reports facts and runs effects; it decides nothing itself. Every
 * audio stream is reported, a sink's monitor recorder included (the core
 * decides it is observation, not a session), and so is the activation of a
 * stream's node by anyone but the module (the core decides whether it is an
 * activation request: when it holds the stream paused).
 *
 * Every output stream is reported with its properties, loopbacks' included: the
 * core recognises the output stream of a virtual sink (a loopback, WirePlumber
 * 0.5's role loopbacks, a filter-chain sink: it shares the sink's
 * `node.link-group`) as a relay, not a session, and gives a stream playing into
 * that sink the relay's route, so the loss of headphones behind a loopback pauses
 * the streams that play into it.
 *
 * Property changes of clients, streams and endpoints are debounced: the core
 * holds the latest per object and decides them once the loop has handled the
 * messages at hand, before it waits for more, so a burst of updates is decided
 * once. Every other event (a stream starting, a sink going away) is decided at
 * once, after the held changes.
 *
 * ## Module Options
 *
 * - `profile`: `desktop` (default) or `ios`: how a stream without role or
 *   declaration is treated.
 * - `duck.level`: the gain of ducked streams, 0..1 (default 0.2, -14 dB).
 * - `duck.strong-level`: the gain used under voice prompts when
 *   `duck.strong-for-prompts` is on (default 0.1; not above `duck.level`).
 * - `duck.strong-for-prompts`: `true` or `false` (default): whether voicePrompt
 *   and navigation duckers use `duck.strong-level`.
 * - `duck.ramp-down-ms`, `duck.ramp-up-ms`: ramp times (default 250, 500).
 *   A ramp is a series of steps, each sent once the stream has taken the
 *   previous one and one and a half of the graph's longest cycles (max-quantum
 *   at the clock rate, 42.7 ms by default) have passed, so that no processing
 *   cycle changes the gain by more than 3 dB at any quantum, even when the
 *   stream processes some cycles late; a ramp takes longer than asked when
 *   3 dB per step cannot cover its distance in time.
 * - `fade.out-ms`, `fade.in-ms`: an interruption's fade (default 300, 500): a
 *   stream a call or another interruption stops fades to silence first and
 *   is paused then; when it resumes it fades back in. Steps of at most 5.5 dB,
 *   paced as a duck's, while the stream is within 42 dB of its level, then
 *   silence in one step: at the default max-quantum a whole fade takes about
 *   half a second, however short it is asked to be. 0 pauses at once (out) or
 *   restores the gain at once (in). A private output's loss never fades: those
 *   streams are paused at once.
 * - `private.outputs`: port types that are private (default
 *   `[ headphones bluetoothA2DP bluetoothHFP bluetoothLE ]`).
 * - `private.form-factors`: `device.form-factor` values that are private, e.g.
 *   of USB headsets (default `[ headphone headphones headset hands-free
 *   handset earbuds ]`).
 * - `call.allowed-applications`: the clients granted call priority (a
 *   Phone-role stream, a playAndRecord voiceChat/videoChat declaration), named
 *   by what the daemon knows of them: an executable path (`/usr/bin/linphone`,
 *   read from `/proc/<pid>/exe` of `pipewire.sec.pid`), `uid:<n>`, or a Flatpak
 *   application id. Default: every client that is not sandboxed. Sandboxed
 *   clients (restricted by the access module, or in a Flatpak) get normal
 *   priority for calls and alarms unless named here. See docs/trust.md.
 * - `control.allowed-applications`: the clients that may set the global
 *   switches (silent mode, screen lock), named the same way. Default: every
 *   client that is not sandboxed. A switch counts only when the client sets it
 *   in its own properties, never when another client writes them.
 * - `interrupt.denied-applications`: application names that may not interrupt
 *   others (`cannotInterruptOthers`).
 * - `resume.grace-ms`: how long the end of an interruption or a duck waits after
 *   the session that caused it went (default 200; espeak-ng leaves 11-45 ms
 *   between the streams of one utterance). A session of the same program
 *   with the same declaration that starts within it takes them over: speech
 *   synthesizers that open a stream per phrase do not give the audio back in
 *   every gap. 0 ends them at once. A session whose client has gone (the
 *   program quit), or that deactivated explicitly, ends them at once whatever
 *   this is.
 * - `publish.interval-ms`: how often at most the `audio-session` metadata's
 *   state keys are rewritten (default 20, at most 1000; 0 writes every change).
 *   A state that changes again within it is written once, as it then stands,
 *   by the first decision after the interval (or two intervals after the last
 *   write when none comes); a change after a quiet interval is written at
 *   once, and nothing waits around an event (an interruption, a route change).
 * - `legacy.resume-on-device-return`: `true` or `false` (default): resume
 *   legacy streams paused by a private output's loss when it comes back.
 * - `alerts.prefer-no-interruptions`: `mix` (default) or `holdBack`: what alerts
 *   do while a session prefers no interruptions from system alerts.
 * - `calls.from-graph`: `true` (default) or `false`: a program that declares
 *   nothing and captures a microphone while it plays (a call in a browser) is
 *   a call; one that only captures is a recording.
 * - `calls.listen`: `true` (default) or `false`: whether such a program's
 *   output counts only once it carried sound. The module listens to the
 *   level of a capturing program's outputs (a link inside the daemon into a
 *   probe that keeps nothing but whether a sample rose above -70 dBFS) until
 *   one does, so a program that records while it plays silence (Firefox
 *   does, for a page that only records) is a recording, not a call. `false`
 *   takes every running output as sound.
 * - `role.table`: overrides of the `media.role` table, for example
 *   `{ Game = { category = ambient } }`.
 *
 * Every option can also be set from a config section
 * `module.audio-session.args` in a `pipewire.conf.d` drop-in.
 *
 * ## Example configuration
 *
 *\code{.unparsed}
 * context.modules = [
 * {   name = libpipewire-module-audio-session
 *     args = {
 *         #profile = desktop
 *         #duck.level = 0.2
 *         #duck.ramp-down-ms = 250
 *         #duck.ramp-up-ms = 500
 *         #fade.out-ms = 300
 *         #fade.in-ms = 500
 *     }
 * }
 * ]
 *\endcode
 *
 * ## See also
 *
 * - `pw-session status` and `pw-session monitor`: read the `audio-session` metadata
 */

#define NAME "audio-session"

PW_LOG_TOPIC(mod_topic, "mod." NAME);
#define PW_LOG_TOPIC_DEFAULT mod_topic

#define MODULE_USAGE	"( profile=<desktop|ios> ) "				\
			"( duck.level=<0..1> ) "				\
			"( duck.strong-level=<0..1> ) "				\
			"( duck.strong-for-prompts=<bool> ) "			\
			"( duck.ramp-down-ms=<ms> ) "				\
			"( duck.ramp-up-ms=<ms> ) "				\
			"( fade.out-ms=<ms> ) "					\
			"( fade.in-ms=<ms> ) "					\
			"( resume.grace-ms=<ms> ) "				\
			"( publish.interval-ms=<ms> ) "				\
			"( private.outputs=[ <port type> ... ] ) "		\
			"( private.form-factors=[ <form factor> ... ] ) "	\
			"( call.allowed-applications=[ <executable|uid:<n>|app-id> ... ] ) "	\
			"( control.allowed-applications=[ <executable|uid:<n>|app-id> ... ] ) "	\
			"( interrupt.denied-applications=[ <name> ... ] ) "	\
			"( legacy.resume-on-device-return=<bool> ) "		\
			"( alerts.prefer-no-interruptions=<mix|holdBack> ) "	\
			"( calls.from-graph=<bool> ) "				\
			"( calls.listen=<bool> ) "				\
			"( role.table={ <role> = { category=<c> mode=<m> options=<o> } ... } ) "

#define METADATA_NAME	"audio-session"

static const struct spa_dict_item module_props[] = {
	{ PW_KEY_MODULE_AUTHOR, "The pipewire-audio-session authors" },
	{ PW_KEY_MODULE_DESCRIPTION, "Audio sessions: categories, interruptions, ducking and route policy" },
	{ PW_KEY_MODULE_USAGE, MODULE_USAGE },
	{ PW_KEY_MODULE_VERSION, "0.1.0" },
};

enum object_kind {
	OBJECT_STREAM,
	OBJECT_ENDPOINT,
};

struct node_entry {
	struct spa_list link;
	struct impl *impl;
	struct pw_impl_node *node;
	uint32_t id;
	enum object_kind kind;
	struct spa_hook listener;
	struct as_gain gain;		/**< the module's duck/silence on this stream */
	unsigned int running:1;
	unsigned int changing_active:1;	/**< set_active() from here is in progress */
	unsigned int removed:1;
	unsigned int is_source:1;	/**< an endpoint of kind AS_ENDPOINT_SOURCE */
	unsigned int muted:1;		/**< the source's Props mute, as last reported to the core */
	/* Its program last asked for it inactive (a pw_stream paused, a PulseAudio stream
	 * corked), as its client-node said: the daemon shows nothing of it while our own
	 * pause already holds the node inactive. */
	unsigned int owner_inactive:1;
	/* An ALSA-style endpoint: a port (route) of a device's profile device. */
	uint32_t device_id;		/**< `device.id`, or SPA_ID_INVALID */
	int32_t profile_device;		/**< `card.profile.device`, or -1 */
	uint64_t props_digest;		/**< of the properties last handed to the core */
	bool told_props;
};

struct device_entry {
	struct spa_list link;
	struct impl *impl;
	struct pw_impl_device *device;
	uint32_t id;
	struct spa_hook listener;
	struct as_route_reader routes;
	struct as_route_set last_routes;
	bool have_routes;
	char profile[AS_ROUTE_NAME_MAX];	/**< the active profile last told to the core */
	bool told_profile;
};

struct client_entry {
	struct spa_list link;
	struct impl *impl;
	struct pw_impl_client *client;
	uint32_t id;
	struct spa_hook listener;
	/* The client's own client resource (PW_ID_CLIENT): the updates it sends about
	 * itself arrive there; another client writing its properties uses its own. */
	struct pw_resource *own;
	struct spa_hook own_listener;		/**< the resource's methods */
	struct spa_hook own_resource_listener;	/**< its destroy */
	/* Held until the loop has handled the messages at hand (impl->held_clients): a
	 * client that rewrites its properties many times in a burst is read once, as it
	 * stands then. */
	struct spa_list held_link;
	bool held;
	bool props_changed;			/**< its properties changed */
	struct pw_properties *own_requests;	/**< the request keys it wrote itself, latest values */
	struct spa_list owner_watches;		/**< struct owner_watch: its client-node resources */
};

/** One client-node resource of a client, listened to for what its program asks of
 * its node (`set_active`). */
struct owner_watch {
	struct spa_list link;
	struct impl *impl;
	struct pw_resource *resource;
	struct spa_hook methods_listener;
	struct spa_hook resource_listener;
};

/** At most this many request keys of one client are held between two loop turns. */
#define MAX_HELD_REQUESTS	16

struct impl {
	struct pw_context *context;
	struct pw_impl_module *module;
	struct spa_hook module_listener;
	struct spa_hook context_listener;

	struct pw_properties *args;
	uint64_t props_seed;		/**< keys the digests of node properties */
	struct pw_impl_metadata *metadata;	/**< NULL between its destruction and recreation */
	struct spa_hook metadata_listener;
	struct spa_hook metadata_global_listener;
	uint32_t metadata_id;
	struct spa_source *recreate_event;	/**< creates the metadata again after a client destroyed it */

	bool access_from_daemon;		/**< the daemon ignores a client's own pipewire.access */
	/* The core object, found once at load: looked up while a client's message is
	 * handled, the daemon hides what that client may not read. */
	struct pw_global *core_global;
	struct as_gains gains;
	struct as_probes probes;	/**< R43: whether a capturing program's outputs carry sound */
	as_core *core;
	/* Held property changes are decided once the loop has handled the messages at hand:
	 * in its hook before it waits again (no event file to write and read per burst). */
	struct spa_hook loop_hook;
	bool loop_hooked;
	pthread_t loop_thread;		/**< the main loop's (the module is loaded there) */
	bool flush_pending;		/**< the hook decides held changes before the loop waits */
	struct spa_source *flush_event;	/**< the same, when a flush asks for another one */
	bool flushing;			/**< handing held client changes to the core, which decides them next */

	struct spa_list nodes;
	/* The live nodes by global id (NULL where none): what the core, a program's
	 * requests and the graph's events name by id is found without walking the list.
	 * PipeWire reuses free ids, so the array stays as long as the daemon's own table
	 * of objects; ids from NODE_INDEX_MAX up are looked up in the list. */
	struct node_entry **node_index;
	uint32_t node_index_size;
	struct spa_list clients;
	struct spa_list devices;
	struct spa_list held_clients;	/**< struct client_entry whose changes wait for on_flush */
	struct spa_list timers;		/**< struct timer_entry: the core's timers that run */
	struct spa_list spare_timers;	/**< fired ones, kept for reuse (at most SPARE_TIMERS) */
	uint32_t n_spare_timers;
};

/** Fired timers kept for the next ones (the publishing timer runs every interval while
 * the graph is busy): no timer file is made and closed per interval. */
#define SPARE_TIMERS	4

/** A timer the core asked for (a held resume, the publishing interval); kept for reuse
 * when it fires, freed when the module goes. */
struct timer_entry {
	struct spa_list link;
	struct impl *impl;
	uint64_t token;
	struct spa_source *source;
};

/* ---- properties across the ABI ------------------------------------------ */

/** Hands a spa_dict to the core without copying: as_prop has spa_dict_item's layout. */
static struct as_props props_of(const struct spa_dict *dict)
{
	SPA_STATIC_ASSERT(sizeof(struct as_prop) == sizeof(struct spa_dict_item));
	if (dict == NULL)
		return (struct as_props) { NULL, 0 };
	return (struct as_props) { (const struct as_prop *) dict->items, dict->n_items };
}

/* ---- held client changes ------------------------------------------------------ */

static void flush_held_clients(struct impl *impl);
static void request_flush(struct impl *impl);

/** The core, for an event: the client changes held so far reach it first, so it sees
 * the graph in the order things happened. */
static as_core *core_for_event(struct impl *impl)
{
	if (!spa_list_is_empty(&impl->held_clients))
		flush_held_clients(impl);
	return impl->core;
}

/* ---- lookups ---------------------------------------------------------------- */

/** Ids from here up are not indexed (8 bytes per id up to it). */
#define NODE_INDEX_MAX	(1u << 16)

static struct node_entry *find_node(struct impl *impl, uint32_t id)
{
	struct node_entry *n;

	if (id < impl->node_index_size) {
		n = impl->node_index[id];
		return n != NULL && !n->removed ? n : NULL;
	}
	if (id < NODE_INDEX_MAX)
		return NULL;
	spa_list_for_each(n, &impl->nodes, link)
		if (n->id == id && !n->removed)
			return n;
	return NULL;
}

/** Indexes `n` by its id. False when there is no memory for it (the node is not followed). */
static bool node_index_add(struct impl *impl, struct node_entry *n)
{
	if (n->id >= NODE_INDEX_MAX)
		return true;
	if (n->id >= impl->node_index_size) {
		uint32_t size = SPA_MAX(impl->node_index_size * 2, 64u);
		struct node_entry **index;

		while (size <= n->id)
			size *= 2;
		size = SPA_MIN(size, NODE_INDEX_MAX);
		index = realloc(impl->node_index, size * sizeof(*index));
		if (index == NULL)
			return false;
		memset(index + impl->node_index_size, 0, (size - impl->node_index_size) * sizeof(*index));
		impl->node_index = index;
		impl->node_index_size = size;
	}
	impl->node_index[n->id] = n;
	return true;
}

static void node_index_remove(struct impl *impl, struct node_entry *n)
{
	if (n->id < impl->node_index_size && impl->node_index[n->id] == n)
		impl->node_index[n->id] = NULL;
}

static struct device_entry *find_device(struct impl *impl, uint32_t id)
{
	struct device_entry *d;
	if (id == SPA_ID_INVALID)
		return NULL;
	spa_list_for_each(d, &impl->devices, link)
		if (d->id == id)
			return d;
	return NULL;
}

/** An endpoint as the core sees it: the node's properties, and its device's where
 * the node has none. NULL when there is nothing to add (no device known, or no
 * memory): use the node's own. */
static struct pw_properties *endpoint_props(struct impl *impl, struct node_entry *n,
		const struct spa_dict *node_props)
{
	struct device_entry *d = find_device(impl, n->device_id);
	const struct pw_properties *dp;
	struct pw_properties *merged;
	const struct spa_dict_item *it;

	if (d == NULL || (dp = pw_impl_device_get_properties(d->device)) == NULL)
		return NULL;
	merged = pw_properties_new_dict(node_props ? node_props : &SPA_DICT_INIT(NULL, 0));
	if (merged == NULL)
		return NULL;
	spa_dict_for_each(it, &dp->dict)
		if (pw_properties_get(merged, it->key) == NULL)
			pw_properties_set(merged, it->key, it->value);
	return merged;
}

static void device_report_routes(struct impl *impl, struct device_entry *d, struct node_entry *only);

static void endpoint_to_core(struct impl *impl, struct node_entry *n, const struct spa_dict *node_props,
		void (*call)(as_core *core, uint32_t node_id, const struct as_props *props))
{
	struct pw_properties *merged = endpoint_props(impl, n, node_props);
	struct as_props p = props_of(merged ? &merged->dict : node_props);
	call(core_for_event(impl), n->id, &p);
	pw_properties_free(merged);
}

/* ---- effects from the core ------------------------------------------------- */

static void set_node_active(struct node_entry *n, bool active)
{
	int res;
	n->changing_active = true;
	res = pw_impl_node_set_active(n->node, active);
	n->changing_active = false;
	if (res < 0)
		pw_log_warn("node %u: set_active(%d): %s", n->id, active, spa_strerror(res));
}

static void effect_pause(void *data, uint32_t node_id)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	pw_log_info("pause stream %u", node_id);
	set_node_active(n, false);
}

static void effect_resume(void *data, uint32_t node_id)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	/* Our pause is undone; the program's own pause stays. Activated now, the node
	 * would run while its program's side of it is still stopped: the Start it is
	 * sent then is skipped there, and the program's own activation later changes
	 * nothing in the daemon, so no Start ever reaches it and it stays silent. Left
	 * inactive, the program's activation starts it as usual. */
	if (n->owner_inactive) {
		pw_log_info("resume stream %u: its program keeps it paused, it plays when its program starts it", node_id);
		return;
	}
	pw_log_info("resume stream %u", node_id);
	set_node_active(n, true);
}

static void effect_duck(void *data, uint32_t node_id, float gain, uint32_t ramp_ms)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	pw_log_info("duck stream %u to %.3f over %u ms", node_id, gain, ramp_ms);
	as_gain_duck(&impl->gains, &n->gain, gain, ramp_ms);
}

static void effect_fade(void *data, uint32_t node_id, float gain, uint32_t ms)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	pw_log_info("fade stream %u to %.3f over %u ms", node_id, gain, ms);
	as_gain_fade(&impl->gains, &n->gain, gain, ms);
}

/* From the loop's turn after the stream took a fade's last step (never from inside an
 * effect): the core pauses it now. */
static void on_faded_out(void *data, uint32_t node_id)
{
	struct impl *impl = data;
	if (impl->core != NULL)
		as_core_stream_faded_out(core_for_event(impl), node_id);
}

static void effect_listen(void *data, uint32_t node_id, bool on)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	pw_log_info("%s to stream %u", on ? "listen" : "stop listening", node_id);
	if (on)
		as_probe_start(&impl->probes, n->node, node_id);
	else
		as_probe_stop(&impl->probes, node_id);
}

/* From the loop's turn after a probe heard the stream (or could not listen to it). */
static void on_heard(void *data, uint32_t node_id)
{
	struct impl *impl = data;
	if (impl->core != NULL)
		as_core_stream_heard(core_for_event(impl), node_id);
}

static void effect_silence(void *data, uint32_t node_id, bool silenced)
{
	struct impl *impl = data;
	struct node_entry *n = find_node(impl, node_id);
	if (n == NULL || n->kind != OBJECT_STREAM)
		return;
	pw_log_info("%s stream %u", silenced ? "silence" : "unsilence", node_id);
	as_gain_silence(&impl->gains, &n->gain, silenced);
}

static void effect_publish(void *data, uint32_t subject, const char *key, const char *type, const char *value)
{
	struct impl *impl = data;
	if (impl->metadata == NULL || key == NULL)
		return;
	pw_impl_metadata_set_property(impl->metadata, subject, key, value ? type : NULL, value);
}

static void effect_log(void *data, enum as_log_level level, const char *message)
{
	switch (level) {
	case AS_LOG_ERROR: pw_log_error("%s", message); break;
	case AS_LOG_WARN: pw_log_warn("%s", message); break;
	case AS_LOG_INFO: pw_log_info("%s", message); break;
	default: pw_log_debug("%s", message); break;
	}
}

/* Property changes are held by the core and decided once the messages at hand
 * (a burst of updates) have all been handled, before the loop waits again. */
static void effect_schedule_flush(void *data)
{
	struct impl *impl = data;
	/* The held client changes being handed over are decided by the flush that follows
	 * at once: another turn of the loop would find nothing held. */
	if (impl->flushing)
		return;
	request_flush(impl);
}

static void timer_free(struct timer_entry *t)
{
	spa_list_remove(&t->link);
	pw_loop_destroy_source(pw_context_get_main_loop(t->impl->context), t->source);
	free(t);
}

static void on_timer(void *data, uint64_t expirations)
{
	struct timer_entry *t = data;
	struct impl *impl = t->impl;
	uint64_t token = t->token;

	/* A one-shot timer is disarmed once it fires: kept for the next one, or freed. */
	if (impl->n_spare_timers < SPARE_TIMERS) {
		spa_list_remove(&t->link);
		spa_list_append(&impl->spare_timers, &t->link);
		impl->n_spare_timers++;
	} else {
		timer_free(t);
	}
	if (impl->core != NULL)
		as_core_timer_fired(core_for_event(impl), token);
}

static void effect_schedule_timer(void *data, uint64_t token, uint32_t milliseconds)
{
	struct impl *impl = data;
	struct pw_loop *loop = pw_context_get_main_loop(impl->context);
	struct timespec value;
	struct timer_entry *t;

	/* A token still pending is moved: it fires once, at the new time. */
	spa_list_for_each(t, &impl->timers, link) {
		if (t->token == token)
			goto arm;
	}
	if (!spa_list_is_empty(&impl->spare_timers)) {
		t = spa_list_first(&impl->spare_timers, struct timer_entry, link);
		spa_list_remove(&t->link);
		impl->n_spare_timers--;
	} else {
		t = calloc(1, sizeof(*t));
		if (t == NULL) {
			pw_log_error("timer: %m");
			return;
		}
		t->impl = impl;
		t->source = pw_loop_add_timer(loop, on_timer, t);
		if (t->source == NULL) {
			pw_log_error("timer: %m");
			free(t);
			return;
		}
	}
	t->token = token;
	spa_list_append(&impl->timers, &t->link);
arm:
	/* 0 would disarm the timer: at least 1 ns. */
	value.tv_sec = milliseconds / 1000;
	value.tv_nsec = (long) (milliseconds % 1000) * SPA_NSEC_PER_MSEC + (milliseconds == 0 ? 1 : 0);
	pw_loop_update_timer(loop, t->source, &value, NULL, false);
}

static void flush_now(struct impl *impl)
{
	impl->flush_pending = false;
	if (impl->core == NULL)
		return;
	impl->flushing = true;
	flush_held_clients(impl);
	impl->flushing = false;
	as_core_flush(impl->core);
}

static void on_flush(void *data, uint64_t count)
{
	flush_now(data);
}

/** The loop's next turn decides the held changes (`on_flush`). */
static void flush_by_event(struct impl *impl)
{
	if (impl->flush_event != NULL)
		pw_loop_signal_event(pw_context_get_main_loop(impl->context), impl->flush_event);
}

/* Runs in the main loop's thread after each turn's events, before the loop waits for
 * more: held changes are decided there. The loop also runs its hooks in another thread
 * that waits for it (a blocking call into the main loop): nothing is decided there, and
 * the main loop's next turn decides instead. A flush that asks for another one (its
 * effects changed a client's properties) gets a turn of its own. */
static void on_loop_before(void *data)
{
	struct impl *impl = data;
	if (!impl->flush_pending || !pthread_equal(pthread_self(), impl->loop_thread))
		return;
	flush_now(impl);
	if (impl->flush_pending)
		flush_by_event(impl);
}

static void on_loop_after(void *data)
{
}

/* PipeWire 1.x takes hooks with both callbacks only. */
static const struct spa_loop_control_hooks loop_hooks = {
	SPA_VERSION_LOOP_CONTROL_HOOKS,
	.before = on_loop_before,
	.after = on_loop_after,
};

/** Asks for held changes to be decided once the messages at hand are handled: by the
 * loop's hook, or by an event of the loop's where the hook could not be added. */
static void request_flush(struct impl *impl)
{
	if (impl->loop_hooked)
		impl->flush_pending = true;
	else
		flush_by_event(impl);
}

static const struct as_core_effects core_effects = {
	.version = AS_CORE_EFFECTS_VERSION,
	.pause = effect_pause,
	.resume = effect_resume,
	.duck = effect_duck,
	.silence = effect_silence,
	.publish = effect_publish,
	.log = effect_log,
	.schedule_flush = effect_schedule_flush,
	.schedule_timer = effect_schedule_timer,
	.fade = effect_fade,
	.listen = effect_listen,
};

/* ---- nodes ----------------------------------------------------------------- */

static void node_forget(struct node_entry *n)
{
	spa_hook_remove(&n->listener);
	as_gain_clear(&n->impl->gains, &n->gain);
	node_index_remove(n->impl, n);
	spa_list_remove(&n->link);
	free(n);
}

static void node_destroy(void *data)
{
	struct node_entry *n = data;
	struct impl *impl = n->impl;

	/* The node's links still exist here and no client has heard of the
	 * removal yet: the core pauses what played through a private sink now. */
	n->removed = true;
	pw_log_debug("node %u removed", n->id);
	if (n->kind == OBJECT_ENDPOINT)
		as_core_endpoint_removed(core_for_event(impl), n->id);
	else
		as_core_stream_removed(core_for_event(impl), n->id);
	node_forget(n);
}

static int mute_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next,
		struct spa_pod *param)
{
	int *mute = data;
	const struct spa_pod_prop *prop;
	bool value;

	/* Props without mute (a partial object) leave *mute as it was. */
	if (param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props) ||
	    (prop = spa_pod_find_prop(param, NULL, SPA_PROP_mute)) == NULL ||
	    spa_pod_get_bool(&prop->value, &value) < 0)
		return 0;
	*mute = value;
	return 1;
}

/** R19: the user (pactl set-source-mute, a mic-mute key) muted or unmuted a
 * source. Reads the node's Props `mute` (never writes it) and tells the core
 * only when it differs from what the core last heard. */
static void source_check_mute(struct node_entry *n)
{
	int mute = -1;
	int res;

	res = pw_impl_node_for_each_param(n->node, 0, SPA_PARAM_Props, 0, UINT32_MAX, NULL,
			mute_param, &mute);
	if (res < 0 || mute < 0) {
		if (res < 0)
			pw_log_debug("source %u: can't read Props: %s", n->id, spa_strerror(res));
		return;
	}
	if ((bool) mute == (bool) n->muted)
		return;
	n->muted = mute;
	pw_log_info("source %u %s", n->id, mute ? "muted" : "unmuted");
	as_core_endpoint_mute_changed(core_for_event(n->impl), n->id, mute);
}

/** One step of the digest: `w` mixed into `h` (a multiply and a shift, each invertible,
 * so that every bit of `w` reaches the result). */
static inline uint64_t digest_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/** `str` mixed into `h` eight bytes at a time, then its length (so that "ab" + "c" and
 * "a" + "bc" differ). */
static uint64_t digest_string(uint64_t h, const char *str)
{
	size_t len = strlen(str), i = 0;
	uint64_t w;

	for (; len - i >= sizeof(w); i += sizeof(w)) {
		memcpy(&w, str + i, sizeof(w));
		h = digest_mix(h, w);
	}
	w = 0;
	memcpy(&w, str + i, len - i);
	return digest_mix(digest_mix(h, w), (uint64_t) len);
}

/** A digest of `dict`'s items, keyed with the module's own random seed (a client cannot
 * aim at it): each key and value, eight bytes at a time. For a stream, only the keys
 * the core reads count (`as_core_reads_stream_key`), of the fifty or so the daemon and
 * the client's library set. `node.driver-id`, which PipeWire 1.x sets when a node starts and removes when it
 * stops, is left out either way: the core reads nothing from it. PipeWire 1.x announces
 * a node's properties on each start and stop, so this runs on every one. */
static uint64_t props_digest(uint64_t seed, const struct spa_dict *dict, bool stream)
{
	uint64_t h = digest_mix(0xcbf29ce484222325ULL, seed);
	const struct spa_dict_item *it;
	uint32_t counted = 0;

	if (dict == NULL)
		return h;
	spa_dict_for_each(it, dict) {
		if (it->key == NULL || (stream && !as_core_reads_stream_key(it->key)) ||
		    spa_streq(it->key, "node.driver-id"))
			continue;
		counted++;
		h = digest_string(h, it->key);
		h = digest_string(h, it->value ? it->value : "");
	}
	return digest_mix(h, counted);
}

/** Records `dict` as the properties the core was told of `n`: false when the core
 * already has them (no item it reads changed). */
static bool node_props_told(struct node_entry *n, const struct spa_dict *dict)
{
	uint64_t digest = props_digest(n->impl->props_seed, dict, n->kind == OBJECT_STREAM);

	if (n->told_props && digest == n->props_digest)
		return false;
	n->props_digest = digest;
	n->told_props = true;
	return true;
}

static void node_info_changed(void *data, const struct pw_node_info *info)
{
	struct node_entry *n = data;
	struct as_props props;

	/* Since PipeWire 1.1.81 a driver's listeners also hear its followers' info
	 * (pw_impl_node_set_driver emits the follower's info on the driver): a sink
	 * is told about the streams it drives. Only the node's own info describes it;
	 * taking a stream's properties for the sink's would rename the headphones
	 * after the stream, and they would no longer count as a private output. */
	if (info != pw_impl_node_get_info(n->node))
		return;
	if (n->kind == OBJECT_STREAM && (info->change_mask & PW_NODE_CHANGE_MASK_PARAMS))
		as_gain_props_changed(&n->impl->gains, &n->gain);
	if (n->is_source && (info->change_mask & PW_NODE_CHANGE_MASK_PARAMS))
		source_check_mute(n);
	if (!(info->change_mask & PW_NODE_CHANGE_MASK_PROPS))
		return;
	/* PipeWire 1.x announces a node's properties on each start and stop (its
	 * driver's id): they reach the core only when another item changed. */
	if (!node_props_told(n, info->props))
		return;
	if (n->kind == OBJECT_ENDPOINT) {
		endpoint_to_core(n->impl, n, info->props, as_core_endpoint_changed);
		return;
	}
	props = props_of(info->props);
	as_core_stream_changed(core_for_event(n->impl), n->id, &props);
}

static void node_state_changed(void *data, enum pw_node_state old,
		enum pw_node_state state, const char *error)
{
	struct node_entry *n = data;
	bool running = state == PW_NODE_STATE_RUNNING;

	if (n->kind != OBJECT_STREAM || running == (bool) n->running)
		return;
	n->running = running;
	pw_log_debug("stream %u %s", n->id, running ? "running" : "stopped");
	as_core_stream_running(core_for_event(n->impl), n->id, running);
}

static void node_active_changed(void *data, bool active)
{
	struct node_entry *n = data;

	/* Activated by its owner (pw_stream, pipewire-pulse on uncork), not by our
	 * own resume: the core reads it as an activation request if it holds the
	 * stream paused (R16), never as a silent bypass. */
	if (n->kind == OBJECT_STREAM)
		pw_log_debug("stream %u %s%s", n->id, active ? "active" : "inactive",
				n->changing_active ? " (by the policy)" : "");
	if (n->kind != OBJECT_STREAM || n->changing_active)
		return;
	/* Its program turned it on or off where the daemon shows it (a node of the
	 * daemon's own, or one our pause did not hold). */
	n->owner_inactive = !active;
	if (active)
		as_core_stream_activated(core_for_event(n->impl), n->id);
}

static const struct pw_impl_node_events node_events = {
	PW_VERSION_IMPL_NODE_EVENTS,
	.destroy = node_destroy,
	.info_changed = node_info_changed,
	.state_changed = node_state_changed,
	.active_changed = node_active_changed,
};

static void add_node(struct impl *impl, struct pw_global *global)
{
	struct pw_impl_node *node = pw_global_get_object(global);
	const struct pw_properties *props = pw_impl_node_get_properties(node);
	const char *media_class = pw_properties_get(props, PW_KEY_MEDIA_CLASS);
	uint32_t id = pw_global_get_id(global);
	struct node_entry *n;
	struct as_props p;
	enum object_kind kind;
	enum as_stream_direction direction = AS_STREAM_OUTPUT;
	enum as_endpoint_kind endpoint = AS_ENDPOINT_SINK;

	/* What the node is, the core's translation says: the module only watches. */
	switch (as_core_classify_node(media_class)) {
	case AS_NODE_STREAM_OUTPUT:
		kind = OBJECT_STREAM;
		break;
	case AS_NODE_STREAM_INPUT:
		kind = OBJECT_STREAM;
		direction = AS_STREAM_INPUT;
		break;
	case AS_NODE_SINK:
		kind = OBJECT_ENDPOINT;
		break;
	case AS_NODE_SOURCE:
		kind = OBJECT_ENDPOINT;
		endpoint = AS_ENDPOINT_SOURCE;
		break;
	default:
		return;
	}

	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		pw_log_error("node %u: %m", id);
		return;
	}
	n->impl = impl;
	n->node = node;
	n->id = id;
	n->kind = kind;
	n->device_id = (uint32_t) pw_properties_get_uint32(props, PW_KEY_DEVICE_ID, SPA_ID_INVALID);
	n->profile_device = pw_properties_get_int32(props, "card.profile.device", -1);
	if (!node_index_add(impl, n)) {
		pw_log_error("node %u: no memory to follow it", id);
		free(n);
		return;
	}
	as_gain_init(&n->gain, node, id);
	spa_list_append(&impl->nodes, &n->link);
	pw_impl_node_add_listener(node, &n->listener, &node_events, n);

	p = props_of(&props->dict);
	if (kind == OBJECT_ENDPOINT) {
		struct device_entry *d = find_device(impl, n->device_id);
		struct pw_properties *merged;
		n->is_source = endpoint == AS_ENDPOINT_SOURCE;
		/* The device's routes were read before this node existed: its port first. */
		if (d != NULL && d->have_routes)
			device_report_routes(impl, d, n);
		merged = endpoint_props(impl, n, &props->dict);
		if (merged != NULL)
			p = props_of(&merged->dict);
		as_core_endpoint_added(core_for_event(impl), id, endpoint, &p);
		pw_properties_free(merged);
		/* A source muted before we saw it: the core starts from unmuted. */
		if (n->is_source)
			source_check_mute(n);
	} else {
		uint32_t client_id = (uint32_t) pw_properties_get_uint32(props, PW_KEY_CLIENT_ID, SPA_ID_INVALID);
		/* A program's node starts inactive until its program turns it on (a stream
		 * made paused, a PulseAudio stream made corked, stays so). */
		n->owner_inactive = !pw_impl_node_is_active(node);
		/* The core has these properties now: the node's first info, which carries
		 * the same ones, reaches it only if one it reads changed in between. */
		node_props_told(n, &props->dict);
		as_core_stream_added(core_for_event(impl), id, client_id, direction, &p);
		n->running = pw_impl_node_get_info(node)->state == PW_NODE_STATE_RUNNING;
		if (n->running)
			as_core_stream_running(core_for_event(impl), id, true);
	}
}

/* ---- clients --------------------------------------------------------------- */

/** Holds `c`'s changes until the messages at hand are handled (the latest change last). */
static void client_hold(struct client_entry *c)
{
	struct impl *impl = c->impl;
	bool first = spa_list_is_empty(&impl->held_clients);

	if (c->held)
		spa_list_remove(&c->held_link);
	c->held = true;
	spa_list_append(&impl->held_clients, &c->held_link);
	if (first)
		request_flush(impl);
}

static void client_release(struct client_entry *c)
{
	if (c->held)
		spa_list_remove(&c->held_link);
	c->held = false;
	c->props_changed = false;
	if (c->own_requests != NULL)
		pw_properties_clear(c->own_requests);
}

/** Hands the held client changes to the core: each client's properties as they stand,
 * then the requests it wrote itself, as the daemon reported them (info first). */
static void flush_held_clients(struct impl *impl)
{
	struct client_entry *c;
	struct as_props props;

	while (!spa_list_is_empty(&impl->held_clients)) {
		c = spa_list_first(&impl->held_clients, struct client_entry, held_link);
		spa_list_remove(&c->held_link);
		c->held = false;
		if (c->props_changed) {
			const struct pw_properties *p = pw_impl_client_get_properties(c->client);
			c->props_changed = false;
			props = props_of(p ? &p->dict : NULL);
			as_core_client_changed(impl->core, c->id, &props);
		}
		if (c->own_requests != NULL && c->own_requests->dict.n_items > 0) {
			props = props_of(&c->own_requests->dict);
			as_core_client_own_properties(impl->core, c->id, &props);
			pw_properties_clear(c->own_requests);
		}
	}
}

static void client_info_changed(void *data, const struct pw_client_info *info)
{
	struct client_entry *c = data;

	if (!(info->change_mask & PW_CLIENT_CHANGE_MASK_PROPS))
		return;
	c->props_changed = true;
	client_hold(c);
}

static void client_unwatch_own(struct client_entry *c)
{
	if (c->own == NULL)
		return;
	spa_hook_remove(&c->own_listener);
	spa_hook_remove(&c->own_resource_listener);
	c->own = NULL;
}

static void owner_watch_free(struct owner_watch *w)
{
	spa_hook_remove(&w->methods_listener);
	spa_hook_remove(&w->resource_listener);
	spa_list_remove(&w->link);
	free(w);
}

static void client_forget(struct client_entry *c)
{
	struct owner_watch *w;

	spa_list_consume(w, &c->owner_watches, link)
		owner_watch_free(w);
	client_release(c);
	pw_properties_free(c->own_requests);
	client_unwatch_own(c);
	spa_hook_remove(&c->listener);
	spa_list_remove(&c->link);
	free(c);
}

/* What the daemon enforces, not what the client says: the access module grants an
 * unrestricted client read and execute on the core object before the client is
 * registered; a client confined (or one that named its own access on PipeWire
 * before 0.3.82) has none at that moment. */
/* From 0.3.82 the daemon ignores a client's own `pipewire.access` (the library this
 * module runs in, not the headers it was built with). */
static bool daemon_sets_access(void)
{
	int major = 0, minor = 0, micro = 0;
	const char *v = pw_get_library_version();

	if (v == NULL || sscanf(v, "%d.%d.%d", &major, &minor, &micro) < 2)
		return false;
	return major > 0 || minor > 3 || (minor == 3 && micro >= 82);
}

static int8_t core_access_granted(struct impl *impl, struct pw_impl_client *client)
{
	uint32_t perms;

	if (impl->core_global == NULL)
		return -1;
	perms = pw_global_get_permissions(impl->core_global, client);
	return (perms & (PW_PERM_R | PW_PERM_X)) == (PW_PERM_R | PW_PERM_X) ? 1 : 0;
}

static void client_destroy(void *data)
{
	struct client_entry *c = data;
	pw_log_debug("client %u removed", c->id);
	as_core_client_removed(core_for_event(c->impl), c->id);
	client_forget(c);
}

/** A key the core reads from a client's own writing: the global switch requests and
 * the MPRIS bridge's reports (`audio.session.control.*`), and `pipewire.access`.
 * PipeWire 0.3 clients send every property they have with each update (some thirty),
 * so most keys are ruled out by their first two bytes, without a library call. */
static bool is_request_key(const char *key)
{
	if (key == NULL)
		return false;
	if (key[0] == 'a' && key[1] == 'u')
		return spa_strstartswith(key, "audio.session.control.");
	if (key[0] == 'p' && key[1] == 'i')
		return spa_streq(key, PW_KEY_ACCESS);
	return false;
}

/* Runs after the daemon applied the update (its listener was added first). Only the
 * request keys are kept, the latest value of each, until the messages at hand are
 * handled. */
static int own_update_properties(void *data, const struct spa_dict *dict)
{
	struct client_entry *c = data;
	const struct spa_dict_item *item;
	bool any = false;

	spa_dict_for_each(item, dict) {
		if (!is_request_key(item->key))
			continue;
		if (c->own_requests == NULL && (c->own_requests = pw_properties_new(NULL, NULL)) == NULL)
			return 0;
		/* A client cannot hold more than a few keys here: new ones past that are dropped. */
		if (c->own_requests->dict.n_items >= MAX_HELD_REQUESTS &&
		    pw_properties_get(c->own_requests, item->key) == NULL)
			continue;
		/* A key the client removed reads as empty, as the core always heard it. */
		pw_properties_set(c->own_requests, item->key, item->value ? item->value : "");
		any = true;
	}
	if (any)
		client_hold(c);
	return 0;
}

static const struct pw_client_methods own_methods = {
	PW_VERSION_CLIENT_METHODS,
	.update_properties = own_update_properties,
};

static void own_resource_destroy(void *data)
{
	client_unwatch_own(data);
}

static const struct pw_resource_events own_resource_events = {
	PW_VERSION_RESOURCE_EVENTS,
	.destroy = own_resource_destroy,
};

static void client_watch_own(struct client_entry *c, struct pw_resource *resource)
{
	if (resource == NULL || c->own == resource ||
	    !spa_streq(pw_resource_get_type(resource, NULL), PW_TYPE_INTERFACE_Client))
		return;
	client_unwatch_own(c);
	c->own = resource;
	pw_resource_add_listener(resource, &c->own_resource_listener, &own_resource_events, c);
	pw_resource_add_object_listener(resource, &c->own_listener, &own_methods, c);
}

/* What the program asks of its node. This listener was added before client-node's
 * own (the resource was announced as it was made), so it runs before the daemon
 * applies the request: only the wish is recorded here. The node is the one the
 * resource is bound to once it exists. */
static int owner_set_active(void *data, bool active)
{
	struct owner_watch *w = data;
	struct node_entry *n = find_node(w->impl, pw_resource_get_bound_id(w->resource));

	if (n == NULL || n->kind != OBJECT_STREAM)
		return 0;
	pw_log_debug("stream %u: its program asks for it %s", n->id, active ? "active" : "inactive");
	n->owner_inactive = !active;
	return 0;
}

static const struct pw_client_node_methods owner_methods = {
	PW_VERSION_CLIENT_NODE_METHODS,
	.set_active = owner_set_active,
};

static void owner_resource_destroy(void *data)
{
	owner_watch_free(data);
}

static const struct pw_resource_events owner_resource_events = {
	PW_VERSION_RESOURCE_EVENTS,
	.destroy = owner_resource_destroy,
};

static void client_watch_owner(struct client_entry *c, struct pw_resource *resource)
{
	struct owner_watch *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		pw_log_warn("client %u: cannot follow its stream's requests: %m", c->id);
		return;
	}
	w->impl = c->impl;
	w->resource = resource;
	spa_list_append(&c->owner_watches, &w->link);
	pw_resource_add_listener(resource, &w->resource_listener, &owner_resource_events, w);
	pw_resource_add_object_listener(resource, &w->methods_listener, &owner_methods, w);
}

/* A client that says hello again gets a new own resource; a stream a client makes
 * through the client-node factory gets a client-node resource. */
static void client_resource_added(void *data, struct pw_resource *resource)
{
	struct client_entry *c = data;
	if (pw_resource_get_id(resource) == PW_ID_CLIENT)
		client_watch_own(c, resource);
	else if (spa_streq(pw_resource_get_type(resource, NULL), PW_TYPE_INTERFACE_ClientNode))
		client_watch_owner(c, resource);
}

static const struct pw_impl_client_events client_events = {
	PW_VERSION_IMPL_CLIENT_EVENTS,
	.destroy = client_destroy,
	.info_changed = client_info_changed,
	.resource_added = client_resource_added,
};

/** Clients may read and bind the policy's metadata, never write it. */
static void restrict_metadata(struct impl *impl, struct pw_impl_client *client)
{
	struct pw_permission perm;
	int res;

	if (impl->metadata_id == SPA_ID_INVALID)
		return;
	perm = PW_PERMISSION_INIT(impl->metadata_id, PW_PERM_R | PW_PERM_X);
	if ((res = pw_impl_client_update_permissions(client, 1, &perm)) < 0)
		pw_log_warn("client: can't restrict %s: %s", METADATA_NAME, spa_strerror(res));
}

static void add_client(struct impl *impl, struct pw_global *global)
{
	struct pw_impl_client *client = pw_global_get_object(global);
	const struct pw_properties *props = pw_impl_client_get_properties(client);
	struct client_entry *c;
	struct as_props p;
	struct as_client_identity identity;
	struct as_identity_buffer *buf;

	c = calloc(1, sizeof(*c));
	buf = malloc(sizeof(*buf));
	if (c == NULL || buf == NULL) {
		pw_log_error("client: %m");
		free(c);
		free(buf);
		return;
	}
	c->impl = impl;
	c->client = client;
	c->id = pw_global_get_id(global);
	spa_list_init(&c->owner_watches);
	spa_list_append(&impl->clients, &c->link);
	pw_impl_client_add_listener(client, &c->listener, &client_events, c);
	client_watch_own(c, pw_impl_client_find_resource(client, PW_ID_CLIENT));
	restrict_metadata(impl, client);

	as_identity_read(props ? &props->dict : NULL, &identity, buf);
	identity.core_access = core_access_granted(impl, client);
	identity.access_from_daemon = impl->access_from_daemon;
	pw_log_info("client %u: executable %s, app id %s, uid %" PRIi64 ", access %s%s%s", c->id,
			identity.executable ? identity.executable : "(unknown)",
			identity.app_id ? identity.app_id : "(none)", identity.uid,
			identity.access ? identity.access : "(unset)",
			identity.core_access == 0 ? ", no access granted to the core yet" : "",
			identity.flatpak ? ", in a Flatpak" : "");
	p = props_of(props ? &props->dict : NULL);
	as_core_client_added(core_for_event(impl), c->id, &p, &identity);
	free(buf);
}

/* ---- devices and their routes (a jack unplug keeps the sink node) ----------- */

static enum as_route_availability route_availability(uint32_t available)
{
	switch (available) {
	case SPA_PARAM_AVAILABILITY_no: return AS_ROUTE_AVAILABILITY_NO;
	case SPA_PARAM_AVAILABILITY_yes: return AS_ROUTE_AVAILABILITY_YES;
	default: return AS_ROUTE_AVAILABILITY_UNKNOWN;
	}
}

/** Tells the core the device's routes as they were last read, for one of its
 * endpoints (all of them when `only` is NULL): the endpoint's active route and
 * the routes that are unavailable. What that means is the core's to decide. */
static void device_report_routes(struct impl *impl, struct device_entry *d, struct node_entry *only)
{
	const char *unavailable[AS_MAX_UNAVAILABLE_ROUTES];
	uint32_t n_unavailable = as_route_set_unavailable_names(&d->last_routes, unavailable,
			SPA_N_ELEMENTS(unavailable));
	struct node_entry *n, *t;

	spa_list_for_each_safe(n, t, &impl->nodes, link) {
		const struct as_route *r;
		struct as_endpoint_route_facts facts;

		if ((only != NULL && n != only) || n->kind != OBJECT_ENDPOINT || n->removed ||
		    n->device_id != d->id || n->profile_device < 0)
			continue;
		r = as_route_set_active(&d->last_routes,
				n->is_source ? SPA_DIRECTION_INPUT : SPA_DIRECTION_OUTPUT, n->profile_device);
		if (r == NULL)
			continue;
		facts = (struct as_endpoint_route_facts) {
			.name = r->name,
			.port_type = r->port_type,
			.available = route_availability(r->available),
			.unavailable = unavailable,
			.n_unavailable = n_unavailable,
		};
		as_core_endpoint_routes(core_for_event(impl), n->id, &facts);
	}
}

static void device_routes_ready(void *data, const struct as_route_set *set)
{
	struct device_entry *d = data;
	/* A device that answers no profile has none (PipeWire 1.6's Bluetooth device, off). */
	const char *profile = set->has_profile ? set->profile : "";

	d->last_routes = *set;
	d->have_routes = true;
	device_report_routes(d->impl, d, NULL);
	/* The active profile, when it changed: a Bluetooth headset's switch or loss. */
	if (!d->told_profile || !spa_streq(d->profile, profile)) {
		spa_scnprintf(d->profile, sizeof(d->profile), "%s", profile);
		d->told_profile = true;
		pw_log_info("device %u: profile %s", d->id, d->profile[0] ? d->profile : "(none)");
		as_core_device_profile(core_for_event(d->impl), d->id, d->profile);
	}
}

static void device_info_changed(void *data, const struct pw_device_info *info)
{
	struct device_entry *d = data;
	if (info->change_mask & PW_DEVICE_CHANGE_MASK_PARAMS)
		as_route_reader_read(&d->routes);
}

static void device_forget(struct device_entry *d)
{
	as_route_reader_clear(&d->routes);
	spa_hook_remove(&d->listener);
	spa_list_remove(&d->link);
	free(d);
}

static void device_destroy(void *data)
{
	struct device_entry *d = data;
	struct impl *impl = d->impl;
	uint32_t id = d->id;
	bool told = d->told_profile;

	device_forget(d);
	if (told) {
		pw_log_info("device %u: removed", id);
		as_core_device_removed(core_for_event(impl), id);
	}
}

static const struct pw_impl_device_events device_events = {
	PW_VERSION_IMPL_DEVICE_EVENTS,
	.destroy = device_destroy,
	.info_changed = device_info_changed,
};

static void add_device(struct impl *impl, struct pw_global *global)
{
	struct pw_impl_device *device = pw_global_get_object(global);
	const struct pw_properties *props = pw_impl_device_get_properties(device);
	struct device_entry *d;

	/* Sound cards only; their routes are their ports. */
	if (props == NULL || !spa_streq(pw_properties_get(props, PW_KEY_MEDIA_CLASS), "Audio/Device"))
		return;
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		pw_log_error("device: %m");
		return;
	}
	d->impl = impl;
	d->device = device;
	d->id = pw_global_get_id(global);
	spa_list_append(&impl->devices, &d->link);
	pw_impl_device_add_listener(device, &d->listener, &device_events, d);
	as_route_reader_init(&d->routes, pw_impl_device_get_implementation(device), device_routes_ready, d);
	as_route_reader_read(&d->routes);
}

/* ---- the context ----------------------------------------------------------- */

static void add_link(struct impl *impl, struct pw_global *global)
{
	const struct pw_properties *props = pw_global_get_properties(global);
	uint32_t out = pw_properties_get_uint32(props, PW_KEY_LINK_OUTPUT_NODE, SPA_ID_INVALID);
	uint32_t in = pw_properties_get_uint32(props, PW_KEY_LINK_INPUT_NODE, SPA_ID_INVALID);

	if (out == SPA_ID_INVALID || in == SPA_ID_INVALID)
		return;
	as_core_link_added(core_for_event(impl), pw_global_get_id(global), out, in);
}

static void context_global_added(void *data, struct pw_global *global)
{
	struct impl *impl = data;

	if (pw_global_is_type(global, PW_TYPE_INTERFACE_Client))
		add_client(impl, global);
	else if (pw_global_is_type(global, PW_TYPE_INTERFACE_Node))
		add_node(impl, global);
	else if (pw_global_is_type(global, PW_TYPE_INTERFACE_Link))
		add_link(impl, global);
	else if (pw_global_is_type(global, PW_TYPE_INTERFACE_Device))
		add_device(impl, global);
}

static void context_global_removed(void *data, struct pw_global *global)
{
	struct impl *impl = data;

	/* Nodes and clients leave through their own destroy hooks, earlier. */
	if (pw_global_is_type(global, PW_TYPE_INTERFACE_Link))
		as_core_link_removed(core_for_event(impl), pw_global_get_id(global));
}

static const struct pw_context_events context_events = {
	PW_VERSION_CONTEXT_EVENTS,
	.global_added = context_global_added,
	.global_removed = context_global_removed,
};

static int add_existing(void *data, struct pw_global *global)
{
	struct impl *impl = data;
	if (impl->metadata == NULL || global != pw_impl_metadata_get_global(impl->metadata))
		context_global_added(impl, global);
	return 0;
}

/* ---- the metadata ---------------------------------------------------------- */

static void metadata_permissions_changed(void *data, struct pw_impl_client *client,
		uint32_t old_permissions, uint32_t new_permissions)
{
	struct impl *impl = data;

	/* An unrestricted client may grant itself W again: take it back. The
	 * session manager does it for every new client (WirePlumber grants "all"
	 * on PW_ID_ANY), so this is routine: debug level. */
	if ((new_permissions & (PW_PERM_W | PW_PERM_M)) && client != NULL) {
		pw_log_debug("client got write access to %s: restricting again", METADATA_NAME);
		restrict_metadata(impl, client);
	}
}

static const struct pw_global_events metadata_global_events = {
	PW_VERSION_GLOBAL_EVENTS,
	.permissions_changed = metadata_permissions_changed,
};

/** Stops listening to the metadata and forgets it; it is not destroyed here. */
static void metadata_forget(struct impl *impl)
{
	if (impl->metadata == NULL)
		return;
	spa_hook_remove(&impl->metadata_listener);
	spa_hook_remove(&impl->metadata_global_listener);
	impl->metadata = NULL;
	impl->metadata_id = SPA_ID_INVALID;
}

/* Any client with R|X on the metadata can destroy it (a registry destroy needs no
 * W). The object is gone once this returns: drop every pointer into it now and
 * create a new one on the loop's next turn, not from inside its destruction. */
static void metadata_destroy(void *data)
{
	struct impl *impl = data;

	pw_log_warn("metadata %s (id %u) was destroyed: creating it again", METADATA_NAME, impl->metadata_id);
	metadata_forget(impl);
	if (impl->recreate_event != NULL)
		pw_loop_signal_event(pw_context_get_main_loop(impl->context), impl->recreate_event);
}

static const struct pw_impl_metadata_events metadata_events = {
	PW_VERSION_IMPL_METADATA_EVENTS,
	.destroy = metadata_destroy,
};

static int create_metadata(struct impl *impl)
{
	struct pw_properties *props;
	struct pw_global *global;
	int res;

	props = pw_properties_new(PW_KEY_METADATA_NAME, METADATA_NAME, NULL);
	if (props == NULL)
		return -errno;
	impl->metadata = pw_context_create_metadata(impl->context, METADATA_NAME, props, 0);
	if (impl->metadata == NULL)
		return -errno;
	pw_impl_metadata_add_listener(impl->metadata, &impl->metadata_listener, &metadata_events, impl);
	if ((res = pw_impl_metadata_register(impl->metadata, NULL)) < 0) {
		spa_hook_remove(&impl->metadata_listener);
		pw_impl_metadata_destroy(impl->metadata);
		impl->metadata = NULL;
		return res;
	}
	global = pw_impl_metadata_get_global(impl->metadata);
	impl->metadata_id = pw_global_get_id(global);
	pw_global_add_listener(global, &impl->metadata_global_listener, &metadata_global_events, impl);
	return 0;
}

/** The metadata again, read-only for every client, with the current state in it. */
static void on_recreate_metadata(void *data, uint64_t count)
{
	struct impl *impl = data;
	struct client_entry *c;
	int res;

	if (impl->metadata != NULL || impl->core == NULL)
		return;
	if ((res = create_metadata(impl)) < 0) {
		pw_log_error("can't create metadata %s again: %s", METADATA_NAME, spa_strerror(res));
		return;
	}
	spa_list_for_each(c, &impl->clients, link)
		restrict_metadata(impl, c->client);
	as_core_republish(core_for_event(impl));
	pw_log_info("metadata %s is back (id %u)", METADATA_NAME, impl->metadata_id);
}

/* ---- the module ------------------------------------------------------------ */

static void impl_destroy(struct impl *impl)
{
	struct node_entry *n;
	struct client_entry *c;
	struct device_entry *d;
	struct timer_entry *t;

	spa_hook_remove(&impl->context_listener);
	/* The probes' links go unreported: the context is no longer listened to. */
	as_probes_clear(&impl->probes);
	spa_list_consume(t, &impl->timers, link)
		timer_free(t);
	spa_list_consume(t, &impl->spare_timers, link)
		timer_free(t);
	spa_list_consume(d, &impl->devices, link)
		device_forget(d);
	/* Undo every pause and gain of ours before the core goes away (R41). */
	if (impl->core)
		as_core_undo_pauses(impl->core);
	spa_list_consume(n, &impl->nodes, link)
		node_forget(n);
	spa_list_consume(c, &impl->clients, link)
		client_forget(c);
	free(impl->node_index);
	impl->node_index = NULL;
	impl->node_index_size = 0;
	as_gains_clear(&impl->gains);
	if (impl->loop_hooked) {
		spa_hook_remove(&impl->loop_hook);
		impl->loop_hooked = false;
	}
	impl->flush_pending = false;
	if (impl->flush_event)
		pw_loop_destroy_source(pw_context_get_main_loop(impl->context), impl->flush_event);
	if (impl->recreate_event)
		pw_loop_destroy_source(pw_context_get_main_loop(impl->context), impl->recreate_event);
	if (impl->core)
		as_core_free(impl->core);
	if (impl->metadata) {
		struct pw_impl_metadata *metadata = impl->metadata;
		metadata_forget(impl);
		pw_impl_metadata_destroy(metadata);
	}
	pw_properties_free(impl->args);
	free(impl);
}

static void module_destroy(void *data)
{
	struct impl *impl = data;
	spa_hook_remove(&impl->module_listener);
	impl_destroy(impl);
}

static const struct pw_impl_module_events module_events = {
	PW_VERSION_IMPL_MODULE_EVENTS,
	.destroy = module_destroy,
};

/** The longest cycle the graph may run: its max-quantum at its rate (the
 * defaults of PipeWire's settings when the configuration sets none). Ramp steps
 * are paced by it, so that none share a cycle at any quantum. */
static uint64_t longest_cycle_ns(struct pw_context *context)
{
	const struct pw_properties *props = pw_context_get_properties(context);
	uint32_t rate = pw_properties_get_uint32(props, "default.clock.rate", 48000);
	uint32_t max_quantum = pw_properties_get_uint32(props, "default.clock.max-quantum", 2048);

	if (rate == 0 || max_quantum == 0)
		return 0;
	return (uint64_t) max_quantum * SPA_NSEC_PER_SEC / rate;
}

SPA_EXPORT
int pipewire__module_init(struct pw_impl_module *module, const char *args)
{
	struct pw_context *context = pw_impl_module_get_context(module);
	struct impl *impl;
	struct as_props p;
	char error[512] = "";
	int res;

	PW_LOG_TOPIC_INIT(mod_topic);

	/* The policy pauses nodes inside the daemon; in a client it could only race. */
	if (!pw_properties_get_bool(pw_context_get_properties(context), "core.daemon", false)) {
		pw_log_error("%s runs in the PipeWire daemon only (core.daemon = true)", NAME);
		return -ENOTSUP;
	}

	impl = calloc(1, sizeof(*impl));
	if (impl == NULL)
		return -errno;
	impl->context = context;
	impl->access_from_daemon = daemon_sets_access();
	impl->core_global = pw_context_find_global(context, PW_ID_CORE);
	if (impl->core_global == NULL)
		pw_log_warn("no core object: clients' granted access cannot be read");
	impl->module = module;
	impl->metadata_id = SPA_ID_INVALID;
	spa_list_init(&impl->nodes);
	spa_list_init(&impl->clients);
	spa_list_init(&impl->devices);
	spa_list_init(&impl->timers);
	spa_list_init(&impl->spare_timers);
	spa_list_init(&impl->held_clients);

	impl->args = args ? pw_properties_new_string(args) : pw_properties_new(NULL, NULL);
	if (impl->args == NULL) {
		res = -errno;
		pw_log_error("can't parse arguments: %s", spa_strerror(res));
		goto error;
	}
	pw_context_conf_update_props(context, "module." NAME ".args", impl->args);

	if ((res = as_gains_init(&impl->gains, pw_context_get_main_loop(context), longest_cycle_ns(context),
			on_faded_out, impl)) < 0)
		goto error;
	if ((res = as_probes_init(&impl->probes, context, on_heard, impl)) < 0)
		goto error;
	if (getrandom(&impl->props_seed, sizeof(impl->props_seed), GRND_NONBLOCK) != sizeof(impl->props_seed)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		impl->props_seed = ((uint64_t) ts.tv_nsec << 32) ^ (uint64_t) ts.tv_sec ^ (uint64_t) (uintptr_t) impl;
	}
	impl->flush_event = pw_loop_add_event(pw_context_get_main_loop(context), on_flush, impl);
	impl->recreate_event = pw_loop_add_event(pw_context_get_main_loop(context), on_recreate_metadata, impl);
	if (impl->flush_event == NULL || impl->recreate_event == NULL) {
		res = -errno;
		goto error;
	}
	impl->loop_thread = pthread_self();
	pw_loop_add_hook(pw_context_get_main_loop(context), &impl->loop_hook, &loop_hooks, impl);
	/* A loop that refused the hook leaves it unlinked: the event decides then. */
	impl->loop_hooked = impl->loop_hook.link.next != NULL;
	if (!impl->loop_hooked)
		pw_log_info("the main loop took no hook: held changes are decided by an event");

	p = props_of(&impl->args->dict);
	impl->core = as_core_new(&p, &core_effects, impl, error, sizeof(error));
	if (impl->core == NULL) {
		pw_log_error("bad arguments: %s", error);
		res = -EINVAL;
		goto error;
	}

	if ((res = create_metadata(impl)) < 0) {
		pw_log_error("can't create metadata %s: %s", METADATA_NAME, spa_strerror(res));
		goto error;
	}

	pw_impl_module_add_listener(module, &impl->module_listener, &module_events, impl);
	pw_impl_module_update_properties(module, &SPA_DICT_INIT_ARRAY(module_props));

	pw_context_add_listener(context, &impl->context_listener, &context_events, impl);
	pw_context_for_each_global(context, add_existing, impl);
	pw_log_info("audio sessions: ready (metadata %s id %u)", METADATA_NAME, impl->metadata_id);
	return 0;

error:
	impl_destroy(impl);
	return res;
}
