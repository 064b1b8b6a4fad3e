// The policy's public vocabulary (Category, Mode, CategoryOptions, SessionError,
// Port, Route, reasons) is the library's vocabulary too.
@_exported import SessionPolicy

/// `AVAudioSessionPortDescription`. Spelled out because Foundation also has a `Port`.
public typealias SessionPort = Port
