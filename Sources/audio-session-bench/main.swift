print("audio-session-bench: not yet")
