// SPDX-License-Identifier: MIT

/// What the control face owes and keeps for each socket client, by client id, as plain values
/// (no socket, no loop: tested by tables in `ControlClientBookTests`):
/// - reply order: a client's replies keep the order of its lines although a later line may be
///   answered before an earlier one (one waits for a save or the tag reader): `reserve` a slot,
///   `fill` it later; `say` queues a ready line behind the slots still owed;
/// - event streams: the clients streaming `events` (and which asked for `--json`);
/// - held interruptions: what each client began with `yield begin`, ended for it when it goes;
/// - grant waiters: the clients waiting for an interruption's grant, per interruption, oldest first.
/// Every mutating call returns the lines to send now, in order; the face sends them.
struct ControlClientBook: Equatable {
    /// A place in a client's reply order.
    struct Slot: Hashable {
        let client: Int
        let number: Int
    }

    /// A reply owed, in its place; `lines` is nil until it is ready.
    private struct Owed: Equatable {
        let number: Int
        var lines: [String]?
    }

    /// Per client, the replies still owed, oldest first.
    private var owed: [Int: [Owed]] = [:]
    private var nextSlot = 0
    /// Clients streaming `events`: true for the ones that asked for `events --json`.
    private(set) var streams: [Int: Bool] = [:]
    /// Interruptions each client holds (`yield begin`), oldest first.
    private(set) var held: [Int: [String]] = [:]
    /// Clients waiting for `Command.grant(id)`, per interruption id, oldest first.
    private(set) var waitingForGrant: [String: [Int]] = [:]

    // MARK: Reply order

    /// Whether the client is owed a reply that is not ready yet (or is queued behind one).
    func owes(_ client: Int) -> Bool { owed[client]?.isEmpty == false }

    /// A reply line for the client: the lines to send now (it, or nothing while earlier replies
    /// are still owed: it is sent after them).
    mutating func say(_ line: String, to client: Int) -> [String] {
        guard owes(client) else { return [line] }
        owed[client]?.append(Owed(number: nextSlot, lines: [line]))
        nextSlot += 1
        return []
    }

    /// A place in the client's reply order for an answer that comes later.
    mutating func reserve(for client: Int) -> Slot {
        let slot = Slot(client: client, number: nextSlot)
        nextSlot += 1
        owed[client, default: []].append(Owed(number: slot.number))
        return slot
    }

    /// Gives back a slot that was reserved and not used (the command answered at once).
    mutating func cancel(_ slot: Slot) {
        owed[slot.client]?.removeAll { $0.number == slot.number }
        if owed[slot.client]?.isEmpty == true { owed[slot.client] = nil }
    }

    /// The answer for `slot` is there: the lines now due to the client, in order (none while an
    /// earlier slot is still owed). `settled`: this answer left the client owed nothing more (false
    /// for a slot already forgotten).
    mutating func fill(_ slot: Slot, _ lines: [String]) -> (due: [String], settled: Bool) {
        guard var slots = owed[slot.client], let at = slots.firstIndex(where: { $0.number == slot.number }) else {
            return ([], false)
        }
        slots[at].lines = lines
        var due: [String] = []
        while let first = slots.first, let ready = first.lines {
            slots.removeFirst()
            due += ready
        }
        owed[slot.client] = slots.isEmpty ? nil : slots
        return (due, slots.isEmpty)
    }

    // MARK: Event streams

    /// Whether any client streams `events`.
    var anyStreams: Bool { !streams.isEmpty }

    mutating func startStreaming(_ client: Int, json: Bool) { streams[client] = json }

    /// Ends the client's stream; false when it was not streaming.
    mutating func stopStreaming(_ client: Int) -> Bool { streams.removeValue(forKey: client) != nil }

    // MARK: Interruptions

    /// `yield begin`: the client holds `id` until it ends it or goes.
    mutating func hold(_ id: String, by client: Int) { held[client, default: []].append(id) }

    /// `yield end`: the client no longer holds `id` (its latest hold of it).
    mutating func unhold(_ id: String, by client: Int) {
        if let at = held[client]?.lastIndex(of: id) { held[client]?.remove(at: at) }
    }

    /// `source end`: the latest hold of `id`, whichever client has it, is given up; that client
    /// (nil when none holds it).
    mutating func unholdLatest(_ id: String) -> Int? {
        // Client ids grow with each connection: the highest one holding `id` began it last.
        guard let client = held.filter({ $0.value.contains(id) }).keys.max() else { return nil }
        unhold(id, by: client)
        if held[client]?.isEmpty == true { held[client] = nil }
        return client
    }

    /// The client no longer waits for `id`'s grant (its begin was refused).
    mutating func stopWaiting(_ id: String, client: Int) {
        guard let at = waitingForGrant[id]?.lastIndex(of: client) else { return }
        waitingForGrant[id]?.remove(at: at)
        if waitingForGrant[id]?.isEmpty == true { waitingForGrant[id] = nil }
    }

    /// The client waits for `id`'s grant, after the ones already waiting for it.
    mutating func waitForGrant(_ id: String, client: Int) { waitingForGrant[id, default: []].append(client) }

    /// `id` is granted: the client that waited longest for it (it is told), nil when none waits.
    mutating func granted(_ id: String) -> Int? {
        guard var queue = waitingForGrant[id], !queue.isEmpty else { return nil }
        let client = queue.removeFirst()
        waitingForGrant[id] = queue.isEmpty ? nil : queue
        return client
    }

    // MARK: Clients

    /// Whether the client streams `events`, holds a yield, waits for an interruption's grant or is
    /// owed a reply: such a client is silent on purpose and never gives its slot to a newcomer.
    func holdsSomething(_ client: Int) -> Bool {
        streams[client] != nil || held[client]?.isEmpty == false || waitingForGrant.values.contains { $0.contains(client) }
            || owes(client)
    }

    /// Forgets the replies owed to a client that cannot take them.
    mutating func forgetReplies(_ client: Int) { owed[client] = nil }

    /// The client is gone: its replies, its stream and its holds are forgotten; the interruptions
    /// it held are returned (a helper that went away cannot end them: the face ends them for it).
    /// A grant it waits for is still its own (it is used up when it comes).
    mutating func drop(_ client: Int) -> [String] {
        owed[client] = nil
        streams[client] = nil
        return held.removeValue(forKey: client) ?? []
    }
}
