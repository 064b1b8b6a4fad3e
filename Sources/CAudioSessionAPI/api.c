/* libaudiosession is implemented in Swift (Sources/AudioSessionC); this target carries its C header. */
