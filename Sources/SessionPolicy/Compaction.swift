/// Memory given back after a crowd has gone. A Swift dictionary or set keeps the room of
/// the largest size it ever had: after a thousand clients came and went, every table that
/// held one entry per client or session would keep room for a thousand. The policy's
/// tables are sized again to what they hold once that is under a quarter of their room.

/// The check is inlined where it is called, for the table's own types: an unspecialized
/// generic call looks up the table's type metadata at run time, which cost more than the
/// check itself on every link the daemon removed.
extension Dictionary {
    /// Storage for what it holds, when that is under a quarter of its room.
    @inlinable
    public mutating func shrinkIfSparse() {
        guard capacity > Compaction.smallestShrunk, count < capacity / 4 else { return }
        shrink()
    }

    @usableFromInline
    mutating func shrink() {
        var smaller = Self(minimumCapacity: count)
        for (k, v) in self { smaller[k] = v }
        self = smaller
    }
}

extension Set {
    /// Storage for what it holds, when that is under a quarter of its room.
    @inlinable
    public mutating func shrinkIfSparse() {
        guard capacity > Compaction.smallestShrunk, count < capacity / 4 else { return }
        shrink()
    }

    @usableFromInline
    mutating func shrink() {
        var smaller = Self(minimumCapacity: count)
        for e in self { smaller.insert(e) }
        self = smaller
    }
}

@usableFromInline
enum Compaction {
    /// Tables with room for this many entries or fewer are left as they are.
    @usableFromInline
    static let smallestShrunk = 64
}

extension PolicyModel {
    mutating func shrinkIfSparse() {
        clients.shrinkIfSparse()
        streams.shrinkIfSparse()
        endpoints.shrinkIfSparse()
        links.shrinkIfSparse()
        relays.shrinkIfSparse()
        monitors.shrinkIfSparse()
        earlyRoutes.shrinkIfSparse()
        playerReports.shrinkIfSparse()
        switchRequests.shrinkIfSparse()
        devices.shrinkIfSparse()
        marks.shrinkIfSparse()
        held.shrinkIfSparse()
        profileSwitches.shrinkIfSparse()
        published.shrinkIfSparse()
        unsettled.shrinkIfSparse()
        publishedPlayers.shrinkIfSparse()
    }
}

extension PolicyIndex {
    mutating func shrinkIfSparse() {
        streamsOfClient.shrinkIfSparse()
        streamsOfProgram.shrinkIfSparse()
        activityOfProgram.shrinkIfSparse()
        listened.shrinkIfSparse()
        declaringStreamsOfClient.shrinkIfSparse()
        linksOfNode.shrinkIfSparse()
        sinksOfGroup.shrinkIfSparse()
        relayOfGroup.shrinkIfSparse()
        streamRoutes.shrinkIfSparse()
        streamEndpoints.shrinkIfSparse()
        endpointsOfClient.shrinkIfSparse()
        gainsOfClient.shrinkIfSparse()
        declaredClients.shrinkIfSparse()
        victimsOf.shrinkIfSparse()
        active.shrinkIfSparse()
        activeNonMixable.shrinkIfSparse()
        activeCalls.shrinkIfSparse()
        activeDuckers.shrinkIfSparse()
        activeRecorders.shrinkIfSparse()
        activeNoAlerts.shrinkIfSparse()
        playing.shrinkIfSparse()
        primary.shrinkIfSparse()
        membership.shrinkIfSparse()
        derived.shrinkIfSparse()
    }
}
