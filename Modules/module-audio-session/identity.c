/* SPDX-FileCopyrightText: Copyright © 2026 The pipewire-audio-session authors */
/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <spa/utils/string.h>

#include "identity.h"

/** The `name=` of the `[Application]` group of a Flatpak instance's .flatpak-info. */
static void read_flatpak_app_id(int pid, char *app_id, size_t size)
{
	char path[64], data[4096], *line, *save = NULL;
	bool in_application = false;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root/.flatpak-info", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	len = read(fd, data, sizeof(data) - 1);
	close(fd);
	if (len <= 0)
		return;
	data[len] = '\0';
	for (line = strtok_r(data, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '[')
			in_application = spa_streq(line, "[Application]");
		else if (in_application && spa_strstartswith(line, "name="))
			snprintf(app_id, size, "%s", line + 5);
	}
}

static bool has_flatpak_info(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/root/.flatpak-info", pid);
	return access(path, F_OK) == 0;
}

void as_identity_read(const struct spa_dict *props, struct as_client_identity *identity,
		struct as_identity_buffer *buf)
{
	const char *str;
	int32_t pid = -1;

	spa_zero(*identity);
	identity->uid = -1;
	buf->executable[0] = '\0';
	buf->app_id[0] = '\0';
	if (props == NULL)
		return;

	if ((str = spa_dict_lookup(props, "pipewire.sec.pid")) != NULL && !spa_atoi32(str, &pid, 10))
		pid = -1;
	if ((str = spa_dict_lookup(props, "pipewire.sec.uid")) != NULL) {
		int64_t uid;
		if (spa_atoi64(str, &uid, 10) && uid >= 0)
			identity->uid = uid;
	}
	/* What this access means is the policy's to decide (ClientAccess.confines). */
	identity->access = spa_dict_lookup(props, "pipewire.access");

	if (pid > 0) {
		char path[64];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		len = readlink(path, buf->executable, sizeof(buf->executable) - 1);
		if (len > 0) {
			buf->executable[len] = '\0';
			identity->executable = buf->executable;
		}
		/* The instance file is mounted read-only into the sandbox by Flatpak: the
		 * application cannot write it. */
		if (has_flatpak_info(pid)) {
			identity->flatpak = true;
			read_flatpak_app_id(pid, buf->app_id, sizeof(buf->app_id));
			if (buf->app_id[0] != '\0')
				identity->app_id = buf->app_id;
		}
	}
}
