/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * Level probes (R43): whether an output stream carries sound. A program that captures a
 * microphone is in a call only once one of its outputs carried sound; Firefox plays
 * silence while a page only records.
 *
 * A probe is a capture stream of the module's own, on an in-process connection to the
 * daemon, with one mono input port. The module links the watched stream's output ports
 * into it with passive links, made inside the daemon (no session manager takes part):
 * the probe runs when the stream runs and never makes it run. Its process callback, on
 * the data thread, only looks for a sample above -70 dBFS; once one is seen the main
 * loop is told (an event), the probe reports the stream heard and keeps nothing else.
 * The probe's node has a media class of its own, so no session manager, no PulseAudio
 * client and not the module itself take it for a recording.
 */
#ifndef AUDIO_SESSION_PROBES_H
#define AUDIO_SESSION_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include <spa/utils/list.h>
#include <pipewire/impl.h>

struct as_probes {
	struct pw_context *context;
	struct pw_loop *loop;
	struct pw_core *core;		/**< in-process connection, made at the first probe */
	struct spa_hook core_listener;
	struct spa_list probes;		/**< struct as_probe */
	struct spa_source *event;	/**< heard, failed or dead probes to handle */
	void (*on_heard)(void *data, uint32_t node_id);
	void *data;
};

/** The media class of a probe's node. */
#define AS_PROBE_MEDIA_CLASS	"AudioSession/Probe"

int as_probes_init(struct as_probes *probes, struct pw_context *context,
		void (*on_heard)(void *data, uint32_t node_id), void *data);
void as_probes_clear(struct as_probes *probes);

/** Listen to `node`'s output ports. `on_heard` is called from a later turn of the loop once
 * a sample above -70 dBFS has gone through, or when the probe cannot be made (then the
 * stream counts as sound, as without listening). Listening to a node already listened to
 * does nothing. */
void as_probe_start(struct as_probes *probes, struct pw_impl_node *node, uint32_t node_id);
/** Stop listening to `node_id` (nothing when not listened to). */
void as_probe_stop(struct as_probes *probes, uint32_t node_id);

#endif /* AUDIO_SESSION_PROBES_H */
