/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * The module's own gains on a stream: a duck factor, ramped in steps from a
 * main-loop timer (PipeWire 0.3.65 has no volumeRamp props), and a silence
 * flag. Both are written as the node's softVolumes / softMute, computed from
 * the user's channelVolumes, which are only ever read (WirePlumber saves
 * volume, mute and channelVolumes; softVolumes is neither saved nor shown).
 */
#ifndef AUDIO_SESSION_GAINS_H
#define AUDIO_SESSION_GAINS_H

#include <stdbool.h>
#include <stdint.h>

#include <spa/utils/list.h>
#include <spa/param/audio/raw.h>
#include <pipewire/impl.h>

struct as_gain {
	struct spa_list link;		/**< in as_gains.ramping while ramping */
	struct pw_impl_node *node;
	uint32_t node_id;
	float current;			/**< the factor applied now */
	float target;
	float step_db;			/**< dB per tick towards target (> 0) */
	uint32_t n_volumes;		/**< the user's channelVolumes, as last read */
	float volumes[SPA_AUDIO_MAX_CHANNELS];
	uint32_t unacknowledged;	/**< ticks since a ramp step was sent and not yet seen in Props */
	unsigned int ramping:1;
	unsigned int awaiting:1;	/**< a ramp step is on its way to the stream */
	unsigned int silenced:1;
	unsigned int applied:1;		/**< softVolumes/softMute were written */
};

struct as_gains {
	struct pw_loop *loop;
	struct spa_source *timer;
	struct spa_list ramping;
	uint32_t tick_ms;		/**< 40 ms: at most two steps per cycle of up to 2048 samples at 48 kHz */
	float max_step_db;		/**< never more per tick (SPEC 12: 3 dB per cycle, with margin) */
	uint32_t max_wait_ticks;	/**< a step not acknowledged after this many ticks: go on */
};

int as_gains_init(struct as_gains *gains, struct pw_loop *loop);
void as_gains_clear(struct as_gains *gains);

void as_gain_init(struct as_gain *gain, struct pw_impl_node *node, uint32_t node_id);
/** Undo this gain on the node (if the node still exists) and stop ramping it. */
void as_gain_clear(struct as_gains *gains, struct as_gain *gain);

/** Ramp the duck factor to `target` (1 = no duck) over `ramp_ms`. */
void as_gain_duck(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms);
void as_gain_silence(struct as_gains *gains, struct as_gain *gain, bool silenced);
/** The node's Props changed: if the user changed channelVolumes while we hold a gain, re-apply. */
void as_gain_props_changed(struct as_gains *gains, struct as_gain *gain);

#endif /* AUDIO_SESSION_GAINS_H */
