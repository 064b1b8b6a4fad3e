/* PipeWire audio sessions */
/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <math.h>
#include <time.h>

#include <spa/param/props.h>
#include <spa/pod/builder.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>
#include <spa/utils/result.h>

#include <pipewire/impl.h>

#include "gains.h"

PW_LOG_TOPIC_EXTERN(mod_topic);
#define PW_LOG_TOPIC_DEFAULT mod_topic

#define MIN_GAIN	0.0001f		/* -80 dB: the floor of the dB arithmetic */

static float to_db(float gain)
{
	return 20.0f * log10f(SPA_MAX(gain, MIN_GAIN));
}

static float from_db(float db)
{
	return powf(10.0f, db / 20.0f);
}

/* ---- reading the user's volume ------------------------------------------- */

static int props_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next,
		struct spa_pod *param)
{
	struct as_gain *gain = data;
	const struct spa_pod_prop *prop;
	const struct spa_pod_object *obj = (const struct spa_pod_object *) param;

	if (!spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props))
		return 0;
	SPA_POD_OBJECT_FOREACH(obj, prop) {
		uint32_t n;
		if (prop->key != SPA_PROP_channelVolumes)
			continue;
		n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, gain->volumes, SPA_AUDIO_MAX_CHANNELS);
		if (n > 0) {
			gain->n_volumes = n;
			return 1;
		}
	}
	return 0;
}

/** Reads the node's channelVolumes; returns whether they differ from what we had. */
static bool read_user_volumes(struct as_gain *gain)
{
	float before[SPA_AUDIO_MAX_CHANNELS];
	uint32_t n_before = gain->n_volumes;
	int res;

	memcpy(before, gain->volumes, sizeof(float) * n_before);
	res = pw_impl_node_for_each_param(gain->node, 0, SPA_PARAM_Props, 0, UINT32_MAX, NULL,
			props_param, gain);
	if (res < 0)
		pw_log_debug("node %u: can't read Props: %s", gain->node_id, spa_strerror(res));
	return n_before != gain->n_volumes ||
		memcmp(before, gain->volumes, sizeof(float) * n_before) != 0;
}

/** What the stream last reported as its softVolumes (first channel), or -1. */
struct soft_report {
	float first;
};

static int soft_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next,
		struct spa_pod *param)
{
	struct soft_report *r = data;
	const struct spa_pod_prop *prop;
	float v[SPA_AUDIO_MAX_CHANNELS];

	if (!spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Props) ||
	    (prop = spa_pod_find_prop(param, NULL, SPA_PROP_softVolumes)) == NULL)
		return 0;
	if (spa_pod_copy_array(&prop->value, SPA_TYPE_Float, v, SPA_AUDIO_MAX_CHANNELS) > 0)
		r->first = v[0];
	return 1;
}

/** Whether the stream reports the soft volume of our last step: only then has it
 * taken that step (a Props change of another kind is no acknowledgement). A
 * stream whose volumes we do not know acknowledges with any change. */
static bool step_taken(struct as_gain *gain)
{
	struct soft_report r = { -1.0f };
	float expected;

	if (gain->n_volumes == 0)
		return true;
	pw_impl_node_for_each_param(gain->node, 0, SPA_PARAM_Props, 0, UINT32_MAX, NULL, soft_param, &r);
	expected = gain->volumes[0] * gain->current;
	return r.first >= 0.0f && fabsf(r.first - expected) <= 1e-4f * SPA_MAX(1.0f, expected);
}

/* ---- writing the module's gain ------------------------------------------- */

static void apply(struct as_gain *gain)
{
	uint8_t buffer[1024 + SPA_AUDIO_MAX_CHANNELS * sizeof(float)];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	struct spa_pod_frame f;
	float soft[SPA_AUDIO_MAX_CHANNELS];
	struct spa_pod *pod;
	uint32_t i;
	int res;

	spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
	if (gain->n_volumes > 0) {
		/* The duck multiplies the user's volume; it never replaces it. */
		for (i = 0; i < gain->n_volumes; i++)
			soft[i] = gain->volumes[i] * gain->current;
		spa_pod_builder_prop(&b, SPA_PROP_softVolumes, 0);
		spa_pod_builder_array(&b, sizeof(float), SPA_TYPE_Float, gain->n_volumes, soft);
	}
	spa_pod_builder_prop(&b, SPA_PROP_softMute, 0);
	spa_pod_builder_bool(&b, gain->silenced);
	pod = spa_pod_builder_pop(&b, &f);
	if (pod == NULL)
		return;
	if ((res = pw_impl_node_set_param(gain->node, SPA_PARAM_Props, 0, pod)) < 0)
		pw_log_warn("node %u: can't set soft volume: %s", gain->node_id, spa_strerror(res));
	gain->applied = true;
}

/* ---- the ramp timer ------------------------------------------------------ */

/* A stream applies Props from its own loop, whenever that loop gets to them,
 * and its data thread uses the new gain from the next cycle it processes. Two
 * steps applied less than a cycle apart can land in one cycle and add up. So each
 * step waits until the stream has reported the previous one in its Props, and
 * then one and a half of the graph's longest cycles. One cycle would be enough
 * if a stream processed every cycle at the same point of it, but it does not: a
 * stream whose thread is not real-time (pw-play's, on a busy machine) starts a
 * cycle a few ms late now and then, and with the graph at its longest cycle a
 * step sent one cycle after the previous lands in the same cycle whenever the
 * stream is later to process it than it was the one before. With half a cycle
 * more, the stream must be more than half a cycle late (21 ms by default, near
 * an xrun) for two steps to meet; at any shorter quantum the gap is two cycles
 * or more. */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * SPA_NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

/** The time the next step of `gain` may be sent. */
static uint64_t due_ns(const struct as_gains *gains, const struct as_gain *gain)
{
	if (gain->next_ns != 0)
		return gain->next_ns;
	/* Never acknowledged (a node that doesn't report its Props): go on later. */
	return gain->sent_ns + gains->max_wait_ns;
}

/** Arms the timer for the earliest due step, or disarms it: no wake-ups while
 * nothing ramps. */
static void rearm(struct as_gains *gains)
{
	struct timespec value = { 0, 0 }, interval = { 0, 0 };
	struct as_gain *gain;
	uint64_t earliest = UINT64_MAX;

	spa_list_for_each(gain, &gains->ramping, link)
		earliest = SPA_MIN(earliest, due_ns(gains, gain));
	if (earliest == UINT64_MAX) {
		if (gains->armed)
			pw_loop_update_timer(gains->loop, gains->timer, &value, &interval, false);
		gains->armed = false;
		return;
	}
	earliest = SPA_MAX(earliest, 1u);
	value.tv_sec = (time_t) (earliest / SPA_NSEC_PER_SEC);
	value.tv_nsec = (long) (earliest % SPA_NSEC_PER_SEC);
	pw_loop_update_timer(gains->loop, gains->timer, &value, &interval, true);
	gains->armed = true;
}

/* An interruption's fade (R42) steps by at most FADE_MAX_STEP_DB while the stream is
 * within FADE_RANGE_DB of the louder end of the fade (where a fade down starts, where a
 * fade up ends: the duck level for a ducked stream) and goes to silence in one step
 * below that: a drop from there is not heard as a cut. Coming back from silence, its
 * first step is to the bottom of that range. */
#define FADE_RANGE_DB		42.0f
#define FADE_MAX_STEP_DB	5.5f

/** The factor after the next step, and whether it is the ramp's last. */
static float next_factor(const struct as_gain *gain, bool *last)
{
	float cur = to_db(gain->current), tgt = to_db(gain->target);
	float floor_db = gain->fade_floor_db;

	*last = false;
	if (gain->fade && cur <= floor_db && tgt <= floor_db) {
		/* Both inaudible: one step. */
		*last = true;
		return gain->target;
	}
	if (gain->fade && tgt > cur && cur < floor_db)
		return from_db(floor_db);
	if (fabsf(tgt - cur) <= gain->step_db) {
		*last = true;
		return gain->target;
	}
	return from_db(cur + (tgt > cur ? gain->step_db : -gain->step_db));
}

static void stop_ramp(struct as_gain *gain)
{
	if (gain->ramping)
		spa_list_remove(&gain->link);
	gain->ramping = false;
	gain->finishing = false;
	gain->next_ns = 0;
}

static void cancel_report(struct as_gain *gain)
{
	if (gain->reporting)
		spa_list_remove(&gain->report_link);
	gain->reporting = false;
}

/** A fade to silence has been taken: report it from the loop's next turn. */
static void fade_done(struct as_gains *gains, struct as_gain *gain)
{
	stop_ramp(gain);
	if (gain->reporting || gains->faded_event == NULL)
		return;
	spa_list_append(&gains->faded, &gain->report_link);
	gain->reporting = true;
	pw_loop_signal_event(gains->loop, gains->faded_event);
}

/** Sends the next step of a ramping gain, or ends a fade whose last step was taken. */
static void step(struct as_gains *gains, struct as_gain *gain)
{
	bool last;

	if (gain->finishing) {
		fade_done(gains, gain);
		return;
	}
	/* A fade coming back from silence jumps to the bottom of its range first: that
	 * step is inaudible, so the next may follow as soon as the stream has taken it,
	 * without waiting a cycle more (the two landing in one cycle is one quiet start). */
	gain->from_silence = gain->fade && gain->target > gain->current &&
		to_db(gain->current) < gain->fade_floor_db - 0.5f;
	gain->current = next_factor(gain, &last);
	if (last) {
		if (gain->fade && gain->target == 0.0f) {
			/* Stays listed until the stream has taken it, and a gap more. */
			gain->finishing = true;
		} else {
			gain->ramping = false;
			spa_list_remove(&gain->link);
		}
	}
	gain->sent_ns = now_ns();
	gain->next_ns = 0;
	apply(gain);
}

static void on_timer(void *data, uint64_t expirations)
{
	struct as_gains *gains = data;
	struct as_gain *gain, *t;
	uint64_t now = now_ns();

	gains->armed = false;
	spa_list_for_each_safe(gain, t, &gains->ramping, link)
		if (due_ns(gains, gain) <= now)
			step(gains, gain);
	rearm(gains);
}

static void on_faded_event(void *data, uint64_t count)
{
	struct as_gains *gains = data;
	struct as_gain *gain;

	/* One at a time: what the callback does may fade or clear other gains. */
	while (!spa_list_is_empty(&gains->faded)) {
		gain = spa_list_first(&gains->faded, struct as_gain, report_link);
		spa_list_remove(&gain->report_link);
		gain->reporting = false;
		if (gains->on_faded)
			gains->on_faded(gains->data, gain->node_id);
	}
}

int as_gains_init(struct as_gains *gains, struct pw_loop *loop, uint64_t cycle_ns,
		void (*on_faded)(void *data, uint32_t node_id), void *data)
{
	gains->loop = loop;
	/* 2048 samples at 48 kHz when the graph's limits are unknown. */
	gains->cycle_ns = cycle_ns > 0 ? cycle_ns : 2048 * SPA_NSEC_PER_SEC / 48000;
	gains->gap_ns = gains->cycle_ns + gains->cycle_ns / 2;
	/* Under 3 dB per cycle with a margin for the float arithmetic of the gain. */
	gains->max_step_db = 2.75f;
	gains->max_wait_ns = 5 * gains->cycle_ns;
	gains->armed = false;
	gains->on_faded = on_faded;
	gains->data = data;
	spa_list_init(&gains->ramping);
	spa_list_init(&gains->faded);
	gains->timer = pw_loop_add_timer(loop, on_timer, gains);
	if (gains->timer == NULL)
		return -errno;
	gains->faded_event = pw_loop_add_event(loop, on_faded_event, gains);
	return gains->faded_event ? 0 : -errno;
}

void as_gains_clear(struct as_gains *gains)
{
	if (gains->timer)
		pw_loop_destroy_source(gains->loop, gains->timer);
	gains->timer = NULL;
	if (gains->faded_event)
		pw_loop_destroy_source(gains->loop, gains->faded_event);
	gains->faded_event = NULL;
}

void as_gain_init(struct as_gain *gain, struct pw_impl_node *node, uint32_t node_id)
{
	gain->node = node;
	gain->node_id = node_id;
	gain->current = gain->target = 1.0f;
	spa_list_init(&gain->link);
	spa_list_init(&gain->report_link);
}

void as_gain_clear(struct as_gains *gains, struct as_gain *gain)
{
	stop_ramp(gain);
	cancel_report(gain);
	if (gain->applied && (gain->current != 1.0f || gain->silenced)) {
		gain->current = gain->target = 1.0f;
		gain->silenced = false;
		apply(gain);
	}
}

/** The distance a ramp covers in its paced steps (a fade's jump to or from silence is
 * one step of its own). */
static float paced_distance(const struct as_gain *gain)
{
	float cur = to_db(gain->current), tgt = to_db(gain->target);

	if (gain->fade) {
		cur = SPA_MAX(cur, gain->fade_floor_db);
		tgt = SPA_MAX(tgt, gain->fade_floor_db);
	}
	return fabsf(tgt - cur);
}

static void ramp(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms, bool fade)
{
	uint64_t ramp_ns = (uint64_t) ramp_ms * SPA_NSEC_PER_MSEC;
	uint64_t steps;
	bool at_once = fade && ramp_ms == 0;

	if (!(target >= 0.0f))		/* also refuses NaN */
		target = 0.0f;
	target = SPA_MIN(target, 1.0f);
	if (!gain->applied)
		read_user_volumes(gain);
	/* A new ramp overtakes a fade still finishing or waiting to be reported. */
	gain->finishing = false;
	cancel_report(gain);
	gain->target = target;
	gain->fade = fade;
	gain->max_step_db = fade ? FADE_MAX_STEP_DB : gains->max_step_db;
	gain->fade_floor_db = SPA_MAX(to_db(gain->current), to_db(target)) - FADE_RANGE_DB;
	if (gain->current == target && !(fade && target == 0.0f)) {
		/* Already there (a fade to silence is still reported once taken). */
		stop_ramp(gain);
		apply(gain);
		return;
	}
	if (at_once) {
		gain->step_db = 1000.0f;
	} else {
		/* The first step goes now, each next one a gap (and an acknowledgement,
		 * a few ms) after the previous: as many steps as fit in the ramp time. */
		steps = 1 + ramp_ns / (gains->gap_ns + 5 * SPA_NSEC_PER_MSEC);
		gain->step_db = SPA_CLAMP(paced_distance(gain) / (float) steps, 0.01f, gain->max_step_db);
	}
	if (gain->ramping && !at_once) {
		/* Already ramping: the new target takes the old ramp's pace over. */
		return;
	}
	if (!gain->ramping) {
		spa_list_append(&gains->ramping, &gain->link);
		gain->ramping = true;
	}
	step(gains, gain);
	rearm(gains);
}

void as_gain_duck(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms)
{
	ramp(gains, gain, target, ramp_ms, false);
}

void as_gain_fade(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms)
{
	ramp(gains, gain, target, ramp_ms, true);
}

void as_gain_silence(struct as_gains *gains, struct as_gain *gain, bool silenced)
{
	if ((bool) gain->silenced == silenced)
		return;
	if (!gain->applied)
		read_user_volumes(gain);
	gain->silenced = silenced;
	apply(gain);
}

void as_gain_props_changed(struct as_gains *gains, struct as_gain *gain)
{
	/* Our own step has reached the stream: the next may go a gap later. */
	if (gain->ramping && gain->next_ns == 0 && step_taken(gain)) {
		gain->next_ns = now_ns() + (gain->from_silence ? 0 : gains->gap_ns);
		rearm(gains);
	}
	/* Only the user's channelVolumes matter here; our own softVolumes writes
	 * also land in Props and must not be mistaken for a user change. */
	if (!gain->applied || (gain->current == 1.0f && !gain->silenced))
		return;
	if (read_user_volumes(gain)) {
		pw_log_info("node %u: user volume changed during a duck: re-applying", gain->node_id);
		apply(gain);
	}
}
