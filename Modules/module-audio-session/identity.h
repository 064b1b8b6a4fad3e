/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#ifndef AUDIO_SESSION_IDENTITY_H
#define AUDIO_SESSION_IDENTITY_H

#include <limits.h>

#include <spa/utils/dict.h>

#include "audio_session_core.h"

/* Who a client is, from what the daemon knows of its connection: the process
 * behind `pipewire.sec.pid` (set from the socket's credentials before the
 * client can send anything, and never changed afterwards), its executable, its
 * Flatpak instance file, and the access the access module gave it. These are
 * facts; what they grant is the policy's decision. */

#define AS_IDENTITY_APP_ID_MAX	256

struct as_identity_buffer {
	char executable[PATH_MAX];
	char app_id[AS_IDENTITY_APP_ID_MAX];
};

/** Fills `identity` (its strings point into `buf` and `client_props`) from a client's properties. */
void as_identity_read(const struct spa_dict *client_props, struct as_client_identity *identity,
		struct as_identity_buffer *buf);

#endif /* AUDIO_SESSION_IDENTITY_H */
