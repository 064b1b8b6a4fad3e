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

static void arm(struct as_gains *gains, bool on)
{
	struct timespec value = { 0, 0 }, interval = { 0, 0 };
	if (on) {
		value.tv_nsec = interval.tv_nsec = (long) gains->tick_ms * SPA_NSEC_PER_MSEC;
	}
	pw_loop_update_timer(gains->loop, gains->timer, &value, &interval, false);
}

static void step(struct as_gains *gains, struct as_gain *gain)
{
	float cur = to_db(gain->current), tgt = to_db(gain->target);

	/* A client node applies Props from its own main loop: when that loop is
	 * late, several steps sent one tick apart land in one cycle and add up to
	 * more than 3 dB. Send the next step only once the stream has reported the
	 * previous one in its Props (or after max_wait_ticks, for a node that never
	 * reports). */
	if (gain->awaiting && ++gain->unacknowledged < gains->max_wait_ticks)
		return;
	gain->awaiting = false;
	gain->unacknowledged = 0;

	if (fabsf(tgt - cur) <= gain->step_db) {
		gain->current = gain->target;
		gain->ramping = false;
		spa_list_remove(&gain->link);
	} else {
		gain->current = from_db(cur + (tgt > cur ? gain->step_db : -gain->step_db));
	}
	apply(gain);
	gain->awaiting = gain->ramping;
}

static void on_tick(void *data, uint64_t expirations)
{
	struct as_gains *gains = data;
	struct as_gain *gain, *t;

	spa_list_for_each_safe(gain, t, &gains->ramping, link)
		step(gains, gain);
	if (spa_list_is_empty(&gains->ramping))
		arm(gains, false);	/* idle: no wake-ups while nothing ramps */
}

int as_gains_init(struct as_gains *gains, struct pw_loop *loop)
{
	gains->loop = loop;
	gains->tick_ms = 40;
	/* Steps are a tick (40 ms) apart and each waits for the stream to take
	 * the previous one, yet two have been seen landing within one 1024-sample
	 * block (4.7 dB with 2.5 dB steps): at 1.25 dB two stay under 3 dB. A
	 * -14 dB duck then takes 12 steps, longer than a 250 ms ramp. */
	gains->max_step_db = 1.25f;
	gains->max_wait_ticks = 5;
	spa_list_init(&gains->ramping);
	gains->timer = pw_loop_add_timer(loop, on_tick, gains);
	return gains->timer ? 0 : -errno;
}

void as_gains_clear(struct as_gains *gains)
{
	if (gains->timer)
		pw_loop_destroy_source(gains->loop, gains->timer);
	gains->timer = NULL;
}

void as_gain_init(struct as_gain *gain, struct pw_impl_node *node, uint32_t node_id)
{
	gain->node = node;
	gain->node_id = node_id;
	gain->current = gain->target = 1.0f;
	spa_list_init(&gain->link);
}

static void stop_ramp(struct as_gain *gain)
{
	if (gain->ramping)
		spa_list_remove(&gain->link);
	gain->ramping = false;
	gain->awaiting = false;
	gain->unacknowledged = 0;
}

void as_gain_clear(struct as_gains *gains, struct as_gain *gain)
{
	stop_ramp(gain);
	if (gain->applied && (gain->current != 1.0f || gain->silenced)) {
		gain->current = gain->target = 1.0f;
		gain->silenced = false;
		apply(gain);
	}
}

void as_gain_duck(struct as_gains *gains, struct as_gain *gain, float target, uint32_t ramp_ms)
{
	float distance;
	uint32_t ticks;

	if (!(target >= 0.0f))		/* also refuses NaN */
		target = 0.0f;
	target = SPA_MIN(target, 1.0f);
	if (!gain->applied)
		read_user_volumes(gain);
	gain->target = target;
	distance = fabsf(to_db(target) - to_db(gain->current));
	ticks = SPA_MAX(1u, ramp_ms / SPA_MAX(gains->tick_ms, 1u));
	gain->step_db = SPA_MIN(distance / (float) ticks, gains->max_step_db);
	if (gain->step_db <= 0.0f) {
		stop_ramp(gain);
		gain->current = target;
		apply(gain);
		return;
	}
	if (!gain->ramping) {
		spa_list_append(&gains->ramping, &gain->link);
		gain->ramping = true;
	}
	step(gains, gain);
	if (gain->ramping)
		arm(gains, true);
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
	/* Our own step has reached the stream: the ramp may go on. */
	gain->awaiting = false;
	/* Only the user's channelVolumes matter here; our own softVolumes writes
	 * also land in Props and must not be mistaken for a user change. */
	if (!gain->applied || (gain->current == 1.0f && !gain->silenced))
		return;
	if (read_user_volumes(gain)) {
		pw_log_info("node %u: user volume changed during a duck: re-applying", gain->node_id);
		apply(gain);
	}
}
