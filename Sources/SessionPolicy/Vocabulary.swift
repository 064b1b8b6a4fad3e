// The words the policy shares with applications (category, mode, options, ports,
// routes, notifications, errors, the declaration's keys) live in
// AudioSessionVocabulary; whoever uses the policy uses them too.
@_exported import AudioSessionVocabulary
