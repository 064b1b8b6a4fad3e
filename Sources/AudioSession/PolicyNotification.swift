// No Foundation here: its `Notification` would shadow the policy's.
import AudioSessionVocabulary

/// What an `audio-session.event` says: the policy's own `Notification` (SessionPolicy),
/// decoded from the document the module published (`PolicyEvent.decode`). One type
/// for both sides, so a notification the policy adds cannot be forgotten here.
public typealias PolicyNotification = Notification
