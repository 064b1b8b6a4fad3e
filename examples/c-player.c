/* A small player in C on libaudiosession: plays a tone as a "playback" session, is paused
 * by a call and plays again after it, and stops for good when its headphones go away.
 *
 *   cc -std=c99 c-player.c $(pkg-config --cflags --libs audio-session) -lm -o c-player
 *   ./c-player 30          # play for at most 30 seconds
 *
 * It prints one line per thing that happens, for a person (and for the tests). */
#define _POSIX_C_SOURCE 200809L
#include <audio-session/audio-session.h>

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct player {
    as_output *output;
    double phase;
    bool stopped; /* the headphones went away: never resume on our own */
};

/* PipeWire's realtime thread: fill the buffer, nothing else. */
static uint32_t render(void *data, float *buffer, uint32_t frames, uint32_t channels)
{
    struct player *p = data;
    for (uint32_t i = 0; i < frames; i++) {
        float v = 0.2f * (float)sin(p->phase);
        p->phase += 2.0 * 3.14159265358979 * 440.0 / 48000.0;
        if (p->phase > 2.0 * 3.14159265358979)
            p->phase -= 2.0 * 3.14159265358979;
        for (uint32_t c = 0; c < channels; c++)
            buffer[i * channels + c] = v;
    }
    return frames;
}

static void on_interruption(void *data, as_interruption_type type, as_interruption_reason reason, bool should_resume)
{
    struct player *p = data;
    if (type == AS_INTERRUPTION_BEGAN) {
        /* The policy has stopped our output already; keep our own state in step. */
        printf("interruption began (%s)\n", as_interruption_reason_name(reason));
        as_output_set_paused(p->output, true);
    } else {
        printf("interruption ended (%s)\n", should_resume ? "shouldResume" : "do not resume");
        if (should_resume && !p->stopped) {
            as_output_set_paused(p->output, false);
            printf("resumed\n");
        }
    }
    fflush(stdout);
}

static void on_route_change(void *data, as_route_change_reason reason, const as_route *previous)
{
    struct player *p = data;
    const char *was = previous->n_outputs > 0 ? previous->outputs[0].name : "nothing";
    const char *type = previous->n_outputs > 0 ? previous->outputs[0].type : "-";
    printf("route change %s (previous output: %s, %s)\n", as_route_change_reason_name(reason), was, type);
    if (reason == AS_ROUTE_CHANGE_OLD_DEVICE_UNAVAILABLE) {
        /* Private listening must not move to the speakers: stop until the user says. */
        p->stopped = true;
        as_output_set_paused(p->output, true);
        printf("paused: the headphones went away\n");
    }
    fflush(stdout);
}

static void on_services_reset(void *data)
{
    (void)data;
    printf("media services were reset\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 30;
    struct player p = { 0 };
    as_session *s = as_session_new("c-player");
    if (s == NULL) {
        fprintf(stderr, "c-player: out of memory\n");
        return 1;
    }
    int res = as_session_set_category(s, AS_CATEGORY_PLAYBACK, AS_MODE_DEFAULT, 0);
    if (res < 0) {
        fprintf(stderr, "c-player: %s: %s\n", as_error_name(res), as_session_last_error(s));
        return 1;
    }
    as_callbacks cb = { AS_CALLBACKS_VERSION, on_interruption, on_route_change, NULL, NULL, on_services_reset };
    as_session_set_callbacks(s, &cb, &p);

    res = as_session_set_active(s, true, 0);
    if (res < 0) {
        fprintf(stderr, "c-player: cannot activate: %s: %s\n", as_error_name(res), as_session_last_error(s));
        as_session_free(s);
        return 1;
    }
    as_route *route = as_session_copy_current_route(s);
    printf("activated (%s, output: %s)\n", as_category_name(AS_CATEGORY_PLAYBACK),
           route != NULL && route->n_outputs > 0 ? route->outputs[0].type : "none");
    as_route_free(route);

    p.output = as_output_new(s, "c-player tone", 48000, 2, false, render, &p);
    if (p.output == NULL) {
        fprintf(stderr, "c-player: no output: %s\n", as_session_last_error(s));
        as_session_free(s);
        return 1;
    }
    printf("playing\n");
    fflush(stdout);

    /* The program's own loop: here poll(), with the session's descriptor. */
    struct pollfd pfd = { .fd = as_session_get_fd(s), .events = POLLIN };
    time_t end = time(NULL) + seconds;
    while (time(NULL) < end) {
        if (poll(&pfd, 1, 200) > 0)
            as_session_dispatch(s);
    }
    as_output_free(p.output);
    as_session_set_active(s, false, AS_NOTIFY_OTHERS_ON_DEACTIVATION);
    as_session_free(s);
    printf("done\n");
    return 0;
}
