// The vocabulary applications share with the policy (Category, Mode, CategoryOptions, SessionError,
// Port, Route, reasons) is the library's vocabulary too.
@_exported import AudioSessionVocabulary

/// `AVAudioSessionPortDescription`. Spelled out because Foundation also has a `Port`.
public typealias SessionPort = Port
