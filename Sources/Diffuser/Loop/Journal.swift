/// A record of a loop's runs: the model each run started from and every event that
/// reached the update, in order.
///
/// Give one to a loop (`Loop(…, journal:)`) and replay it later through the update to
/// re-derive every model the loop published, without running a single effect: to
/// reproduce a bug report, or to check that a change of the update keeps old sessions'
/// models. Replay means something because an update is pure.
///
/// ```swift
/// let journal = Journal<Model, Event>()
/// let loop = Loop(model: .initial, update: update, journal: journal)
/// // … the app runs …
/// let models = journal.replay(update)    // every model, in the order published
/// ```
public final class Journal<Model, Event> {
    /// One record: a run started from a model, or an event reached the update.
    public enum Entry {
        /// A run started from this model.
        case start(Model)
        /// This event reached the update.
        case event(Event)
    }

    private let lock = Lock()
    private var storage: [Entry] = []

    public init() {}

    /// Every record, in order.
    public var entries: [Entry] { lock.withLock { storage } }

    /// The events that reached the update, in order.
    public var events: [Event] {
        entries.compactMap { if case .event(let event) = $0 { return event } else { return nil } }
    }

    /// Forgets every record. The records are released once the journal's lock is given
    /// back: what they free may use the journal (dispatch into its loop, which records).
    public func clear() {
        let forgotten = lock.withLock { () -> [Entry] in
            defer { storage = [] }
            return storage
        }
        // Not `_ = consume forgotten`: the optimizer may release it before the unlock.
        withExtendedLifetime(forgotten) {}
    }

    func recordStart(_ model: Model) { lock.withLock { storage.append(.start(model)) } }
    @usableFromInline
    func record(_ event: Event) { lock.withLock { storage.append(.event(event)) } }

    /// Every model the recorded runs published, re-derived through `update`: each start
    /// model, then the model of each step that made one. Effects are computed and
    /// discarded, never run. An event whose update throws leaves the model as it was,
    /// as it did in the loop.
    public func replay<Effect>(_ update: Update<Model, Event, Effect>) -> [Model] {
        var models: [Model] = []
        var current: Model?
        for entry in entries {
            switch entry {
            case .start(let model):
                current = model
                models.append(model)
            case .event(let event):
                guard let model = current, let next = try? update.next(model, event), let newModel = next.model else {
                    continue
                }
                current = newModel
                models.append(newModel)
            }
        }
        return models
    }
}

/// A journal may be shared between tasks when its models and events may.
extension Journal: @unchecked Sendable where Model: Sendable, Event: Sendable {}
