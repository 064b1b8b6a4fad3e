/// What the policy reads from a client's own properties when they change: the declaration
/// values and the name (`applicationName(_:stream:)` reads the client's first). Kept per
/// client (`PolicyIndex.clientKeys`) so that a change compares the new set with the old
/// one without looking the old set's keys up again.
struct ClientKeys: Equatable {
    var declaration: DeclarationValues
    var applicationName: String?
    /// `audio.session.output-override` ("" when absent).
    var outputOverride: String

    init(_ facts: ClientFacts) {
        declaration = DeclarationValues(facts.sessionKeys)
        applicationName = facts.applicationName
        outputOverride = facts.sessionKeys[DeclarationKey.outputOverride] ?? ""
    }
}
