/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * The module's own gains on a stream: a duck factor, ramped in steps from a
 * main-loop timer, and a silence flag. audioconvert's volumeRamp props (from
 * PipeWire 0.3.68 on) ramp only the stream's main `volume`, which is the
 * user's and which WirePlumber saves, so they are not used: the steps are paced
 * by the graph's cycle instead. Both are written as the node's softVolumes / softMute, computed from
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
	struct spa_list report_link;	/**< in as_gains.faded while its silence waits to be reported */
	struct pw_impl_node *node;
	uint32_t node_id;
	float current;			/**< the factor applied now */
	float target;
	float step_db;			/**< dB per step towards target (> 0) */
	float max_step_db;		/**< this ramp's largest step */
	float fade_floor_db;		/**< a fade goes to or comes from silence below this */
	uint32_t n_volumes;		/**< the user's channelVolumes, as last read */
	float volumes[SPA_AUDIO_MAX_CHANNELS];
	uint64_t sent_ns;		/**< when the last step was sent (monotonic) */
	uint64_t next_ns;		/**< when the next step may go; 0 while one is on its way */
	unsigned int ramping:1;
	unsigned int awaiting:1;	/**< a ramp step is on its way to the stream */
	unsigned int silenced:1;
	unsigned int applied:1;		/**< softVolumes/softMute were written */
	unsigned int fade:1;		/**< the ramp has an interruption fade's shape */
	unsigned int finishing:1;	/**< a fade's last step (to silence) is on its way */
	unsigned int reporting:1;	/**< in as_gains.faded */
	unsigned int from_silence:1;	/**< the step on its way is a fade's jump out of silence */
};

struct as_gains {
	struct pw_loop *loop;
	struct spa_source *timer;
	struct spa_list ramping;
	uint64_t cycle_ns;		/**< the longest graph cycle: max-quantum / rate */
	uint64_t gap_ns;		/**< after a step is taken, before the next: 1.5 cycle_ns */
	float max_step_db;		/**< never more per step (at most 3 dB per cycle, with margin) */
	uint64_t max_wait_ns;		/**< a step not acknowledged after this long: go on */
	bool armed;
	/* Fades to silence that reached their stream, reported from the loop's next turn
	 * (never from inside as_gain_fade, which the core calls). */
	struct spa_list faded;
	struct spa_source *faded_event;
	void (*on_faded)(void *data, uint32_t node_id);
	void *data;
};

/** `cycle_ns`: the longest cycle the graph can run (its max-quantum at its rate):
 * one ramp step at most per cycle, whatever the quantum, with the steps a cycle and
 * a half apart (see gains.c). */
int as_gains_init(struct as_gains *gains, struct pw_loop *loop, uint64_t cycle_ns,
		void (*on_faded)(void *data, uint32_t node_id), void *data);
void as_gains_clear(struct as_gains *gains);

void as_gain_init(struct as_gain *gain, struct pw_impl_node *node, uint32_t node_id);
/** Undo this gain on the node (if the node still exists) and stop ramping it. */
void as_gain_clear(struct as_gains *gains, struct as_gain *gain);

/** Ramp the duck factor to `target` (1 = no duck) over `ramp_ms`. */
void as_gain_duck(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms);
/** An interruption's fade: ramp the same factor to `target` over `ramp_ms`, in steps of
 * at most 5.5 dB (each a cycle or more apart) while the stream is within 42 dB of the
 * fade's louder end, and straight to silence below that; from silence, straight to
 * 42 dB below the target first.
 * When a fade to 0 has been taken by the stream, `on_faded` is called from a later turn
 * of the loop, unless another ramp or the gain's clearing came first. */
void as_gain_fade(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms);
void as_gain_silence(struct as_gains *gains, struct as_gain *gain, bool silenced);
/** The node's Props changed: if the user changed channelVolumes while we hold a gain, re-apply. */
void as_gain_props_changed(struct as_gains *gains, struct as_gain *gain);

#endif /* AUDIO_SESSION_GAINS_H */
