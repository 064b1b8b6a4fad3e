/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

/*
 * audio-session-pausing-player: a test fixture. A program that pauses its own
 * stream as a media player does: it plays a sine tone on a pw_stream (media.role
 * and target from the arguments) and pauses the stream (pw_stream_set_active
 * false) on SIGUSR1 and starts it again (true) on SIGUSR2, as pipewire-pulse does
 * for a PulseAudio program that corks and uncorks. Prints "paused" or "playing"
 * once the daemon has handled the request (a core sync after it).
 *
 *   audio-session-pausing-player [ROLE [TARGET [HZ]]]
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spa/param/audio/format-utils.h>
#include <spa/utils/result.h>
#include <pipewire/pipewire.h>

#define RATE		48000
#define CHANNELS	2

struct state {
	struct pw_main_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct pw_stream *stream;
	struct spa_hook core_listener, stream_listener;
	double phase, step;
	int pending;
	const char *said;
};

static void on_process(void *data)
{
	struct state *s = data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(s->stream);
	struct spa_buffer *buf;
	float *dst;
	uint32_t frames, i, c;

	if (b == NULL)
		return;
	buf = b->buffer;
	if ((dst = buf->datas[0].data) == NULL)
		return;
	frames = buf->datas[0].maxsize / (sizeof(float) * CHANNELS);
	if (b->requested > 0 && b->requested < frames)
		frames = b->requested;
	for (i = 0; i < frames; i++) {
		float v = 0.5f * (float) sin(s->phase);
		s->phase += s->step;
		if (s->phase > 2 * M_PI)
			s->phase -= 2 * M_PI;
		for (c = 0; c < CHANNELS; c++)
			*dst++ = v;
	}
	buf->datas[0].chunk->offset = 0;
	buf->datas[0].chunk->stride = sizeof(float) * CHANNELS;
	buf->datas[0].chunk->size = frames * sizeof(float) * CHANNELS;
	pw_stream_queue_buffer(s->stream, b);
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.process = on_process,
};

static void core_done(void *data, uint32_t id, int seq)
{
	struct state *s = data;
	if (id != PW_ID_CORE || seq != s->pending || s->said == NULL)
		return;
	printf("%s\n", s->said);
	fflush(stdout);
	s->said = NULL;
}

static void core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct state *s = data;
	fprintf(stderr, "error: %s (%s)\n", message, spa_strerror(res));
	if (id == PW_ID_CORE)
		pw_main_loop_quit(s->loop);
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = core_done,
	.error = core_error,
};

static void set_active(struct state *s, bool active)
{
	pw_stream_set_active(s->stream, active);
	s->said = active ? "playing" : "paused";
	s->pending = pw_core_sync(s->core, PW_ID_CORE, s->pending);
}

static void on_pause(void *data, int signal_number)
{
	set_active(data, false);
}

static void on_play(void *data, int signal_number)
{
	set_active(data, true);
}

static void on_quit(void *data, int signal_number)
{
	struct state *s = data;
	pw_main_loop_quit(s->loop);
}

int main(int argc, char *argv[])
{
	struct state s = { 0 };
	const char *role = argc > 1 ? argv[1] : "Music";
	const char *target = argc > 2 ? argv[2] : NULL;
	double hz = argc > 3 ? atof(argv[3]) : 440.0;
	uint8_t buffer[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	const struct spa_pod *params[1];
	struct pw_properties *props;
	struct pw_loop *l;

	pw_init(&argc, &argv);
	if (hz <= 0 || hz >= RATE / 2) {
		fprintf(stderr, "usage: %s [ROLE [TARGET [HZ]]] (HZ between 0 and %d)\n", argv[0], RATE / 2);
		return 2;
	}
	s.step = 2 * M_PI * hz / RATE;
	s.loop = pw_main_loop_new(NULL);
	l = pw_main_loop_get_loop(s.loop);
	pw_loop_add_signal(l, SIGUSR1, on_pause, &s);
	pw_loop_add_signal(l, SIGUSR2, on_play, &s);
	pw_loop_add_signal(l, SIGINT, on_quit, &s);
	pw_loop_add_signal(l, SIGTERM, on_quit, &s);
	s.context = pw_context_new(l, NULL, 0);
	s.core = pw_context_connect(s.context, NULL, 0);
	if (s.core == NULL) {
		fprintf(stderr, "cannot connect to PipeWire: %m\n");
		return 1;
	}
	pw_core_add_listener(s.core, &s.core_listener, &core_events, &s);

	props = pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback",
			PW_KEY_MEDIA_ROLE, role, PW_KEY_APP_NAME, "audio-session-pausing-player", NULL);
	if (target != NULL) {
		pw_properties_set(props, "target.object", target);
		pw_properties_set(props, "node.target", target);
	}
	s.stream = pw_stream_new(s.core, "pausing-player", props);
	pw_stream_add_listener(s.stream, &s.stream_listener, &stream_events, &s);
	params[0] = spa_format_audio_raw_build(&b, SPA_PARAM_EnumFormat,
			&SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_F32, .channels = CHANNELS, .rate = RATE));
	if (pw_stream_connect(s.stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
			PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS,
			params, 1) < 0) {
		fprintf(stderr, "cannot connect the stream\n");
		return 1;
	}
	pw_main_loop_run(s.loop);

	pw_stream_destroy(s.stream);
	pw_core_disconnect(s.core);
	pw_context_destroy(s.context);
	pw_main_loop_destroy(s.loop);
	pw_deinit();
	return 0;
}
