#include "audio_session_core.h"
