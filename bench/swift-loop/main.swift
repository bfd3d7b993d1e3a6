// Loop benchmark (Swift): events per second through a Loop against a hand-written queue
// + reducer + render, in one process; medians and minima of interleaved rounds.
//
//   render-100  a trivial update (bump one of 100 leaves) and a render through a Diffuser
//               of 100 leaves (loop.render), against a hand-written render comparing
//               100 cached leaves; also against the hand-written queue + reducer running
//               the same Diffuser (`hand+diffuser`): the loop's own share is the
//               difference between that and the library;
//   no-render   a trivial update (a counter) and nothing observing the loop;
//   source      no-render's loop fed through a source: each event is sent to an `Output`
//               whose fuser the loop connected (`loop.connect(output.fuser)`), against
//               the same `Output` connected to the hand-written loop's `dispatch`
//               (`output.fuser.connect`): the difference is what a loop's source
//               connection adds to a plain connection;
//   gear        no-render's loop fed through a gear: each event is sent into a `Gear`
//               (`gear.send`) the loop is attached to by one feedback turning each gear
//               event into the loop's event (`.attached(to: gear) { $0 }`), against the
//               same kind of `Gear` observed by the hand-written loop's `dispatch`
//               (`gear.observe`): the difference is what a loop's gear attachment adds
//               to a plain subscription;
//   references  no-render with a model and events that hold references (strings and
//               arrays), as an app's state does: the update copies the model and
//               changes one field;
//   observed    references' loop observed as apps do: a request feedback
//               (`.request(visitRequest)`) and a key-path observer
//               (`loop.observe(\.visits)`), each calling the sink when its part
//               changed, against the same comparisons written by hand;
//   effects     no-render's loop with one effect an event (the event itself), handled in
//               the step by one handler that passes it to the sink, against the
//               hand-written loop handing the same effect to the sink after each reducer
//               call;
//   job         no-render's loop fed through a job: a handler keeps the job of an effect
//               and the benchmark sends each event with `job.send`, as a handler's work
//               sends its results later, against the hand-written loop's `dispatch`.
//
// Every event reaches an idle loop from the benchmark's thread, and the loop handles it
// before `dispatch` (or `send`) returns (the default executor).
//
//   swift run -c release LoopBench [--rounds N] [--tsv]
import Diffuser

#if canImport(Glibc)
import Glibc
#endif

@inline(never)
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// ns per event of `dispatch` over `events` events, after a warm-up.
@inline(__always)
func nsPerEvent(_ events: Int, _ dispatch: (Int) -> Void) -> Double {
    for i in 0..<1_000 { dispatch(i) }
    let start = now()
    for i in 0..<events { dispatch(i) }
    return Double(now() - start) / Double(events)
}

/// The selector of each leaf: what the screen's maps are given.
let leafSelectors: [(Leaves) -> Int] = (0..<Leaves.count).map { i in { $0.values[i] } }

/// A Diffuser of 100 leaves, each `map(leaf i, into(sink))`.
func makeScreen() -> Diffuser<Leaves> {
    Diffuser<Leaves>(leafSelectors.map { .map($0, .into(sink)) })
}

/// A loop rendering through a Diffuser of 100 leaves.
func libraryRenderLoop() -> (Loop<Leaves, Int, Never>, Loop<Leaves, Int, Never>.Disposable) {
    let loop = Loop(model: Leaves(), reducer: bump)
    return (loop, loop.render(makeScreen()))
}

func handRenderLoop() -> HandRenderLoop {
    let render = HandRender()
    return HandRenderLoop(render: render.render)
}

func floorRenderLoop() -> HandRenderLoop {
    let render = FloorRender(leafSelectors)
    return HandRenderLoop(render: render.render)
}

func handDiffuserLoop() -> HandRenderLoop {
    let screen = makeScreen()
    return HandRenderLoop(render: { screen.run($0) })
}

func libraryCounterLoop() -> Loop<Int, Int, Never> {
    Loop(model: 0, reducer: add)
}

/// The references scenario's loop: a reducer over a model and events that hold
/// references.
func libraryProfileLoop() -> Loop<Profile, Visit, Never> {
    Loop(model: Profile(), reducer: record)
}

/// The observed scenario's loop: a request feedback and a key-path observer.
func libraryObservedLoop() -> (Loop<Profile, Visit, Never>, Loop<Profile, Visit, Never>.Disposable) {
    let loop = Loop<Profile, Visit, Never>(
        model: Profile(),
        reducer: record,
        feedbacks: [.request(visitRequest) { request, _ in sink(request) }]
    )
    return (loop, loop.observe(\.visits) { sink($0) })
}

/// A counter loop fed by `output`, and the connection to dispose.
func librarySourceLoop(_ output: Output<Int>) -> (Loop<Int, Int, Never>, Loop<Int, Int, Never>.Disposable) {
    let loop = libraryCounterLoop()
    return (loop, loop.connect(output.fuser))
}

/// A counter loop attached to `gear`: one feedback turns each gear event into the
/// loop's event (the event itself). Disposing the loop lets go of the gear.
func libraryGearLoop(_ gear: Gear<Int>) -> Loop<Int, Int, Never> {
    Loop(model: 0, reducer: add, feedbacks: [.attached(to: gear) { $0 }])
}

/// A counter loop whose update makes one effect an event, handled in the step.
func libraryEffectsLoop() -> Loop<Int, Int, Int> {
    Loop(
        model: 0,
        update: Update { model, event in Next(model: add(model, event), effects: [event]) },
        handlers: [EffectHandler { effect, _ in sink(effect) }]
    )
}

/// A counter loop and the job its handler kept.
func libraryJobLoop() -> (Loop<Int, Int, Bool>, Job<Int>) {
    var kept: Job<Int>?
    let loop = Loop<Int, Int, Bool>(
        model: 0,
        startEffects: [true],
        update: Update { model, event in Next(model: add(model, event)) },
        handlers: [EffectHandler { _, job in kept = job }]
    )
    return (loop, kept!)
}

/// The hand-written counter loop fed by `output`, and the connection to dispose.
func handSourceLoop(_ output: Output<Int>) -> (HandCounterLoop, Fuser<Int>.Disposable) {
    let loop = HandCounterLoop()
    return (loop, output.fuser.connect { loop.dispatch($0) })
}

/// The hand-written counter loop observing `gear`, and the subscription to dispose.
func handGearLoop(_ gear: Gear<Int>) -> (HandCounterLoop, Gear<Int>.Disposable) {
    let loop = HandCounterLoop()
    return (loop, gear.observe { loop.dispatch($0) })
}

/// The library and the baselines must do the same work: the same models and the same
/// effects for the same events.
func checkSameWork() {
    let saved = sinkAccumulator
    defer { sinkAccumulator = saved }
    sinkAccumulator = 0
    let effects = libraryEffectsLoop(), handEffects = HandEffectsLoop()
    for i in 0..<1_000 { effects.dispatch(i) }
    let effectsSink = sinkAccumulator
    sinkAccumulator = 0
    for i in 0..<1_000 { handEffects.dispatch(i) }
    if effectsSink != sinkAccumulator || effects.model != handEffects.model {
        print("the effects loop and the hand-written baseline did different work")
        exit(1)
    }
    sinkAccumulator = 0
    let (loop, rendering) = libraryRenderLoop()
    for i in 0..<1_000 { loop.dispatch(i * 7) }
    let librarySink = sinkAccumulator
    sinkAccumulator = 0
    let hand = handRenderLoop()
    for i in 0..<1_000 { hand.dispatch(i * 7) }
    let handSink = sinkAccumulator
    sinkAccumulator = 0
    let handDiffuser = handDiffuserLoop()
    for i in 0..<1_000 { handDiffuser.dispatch(i * 7) }
    let mixedSink = sinkAccumulator
    sinkAccumulator = 0
    let floor = floorRenderLoop()
    for i in 0..<1_000 { floor.dispatch(i * 7) }
    let counter = libraryCounterLoop(), handCounter = HandCounterLoop()
    for i in 0..<1_000 {
        counter.dispatch(i)
        handCounter.dispatch(i)
    }
    let output = Output<Int>()
    let (fed, feeding) = librarySourceLoop(output), (handFed, handFeeding) = handSourceLoop(output)
    for i in 0..<1_000 { output.send(i) }
    feeding.dispose()
    handFeeding.dispose()
    let gear = Gear<Int>()
    let geared = libraryGearLoop(gear), (handGeared, handGearing) = handGearLoop(gear)
    for i in 0..<1_000 { gear.send(i) }
    geared.dispose()
    handGearing.dispose()
    let (sent, job) = libraryJobLoop()
    for i in 0..<1_000 { job.send(i) }
    let profile = libraryProfileLoop(), handProfile = HandProfileLoop()
    for i in 0..<1_000 {
        profile.dispatch(Visit(count: i, page: visitedPage))
        handProfile.dispatch(Visit(count: i, page: visitedPage))
    }
    let saw = sinkAccumulator
    sinkAccumulator = 0
    let (observed, observing) = libraryObservedLoop()
    for i in 0..<1_000 { observed.dispatch(Visit(count: i, page: visitedPage)) }
    observing.dispose()
    let observedSink = sinkAccumulator
    sinkAccumulator = 0
    let handObserved = HandProfileLoop(observed: true)
    for i in 0..<1_000 { handObserved.dispatch(Visit(count: i, page: visitedPage)) }
    if observedSink != sinkAccumulator || observed.model != handObserved.model {
        print("the observed loop and the hand-written baseline did different work")
        exit(1)
    }
    sinkAccumulator = saw
    if librarySink != handSink || librarySink != mixedSink || librarySink != sinkAccumulator
        || loop.model != hand.model || loop.model != handDiffuser.model || loop.model != floor.model
        || counter.model != handCounter.model || fed.model != handCounter.model
        || handFed.model != handCounter.model || geared.model != handCounter.model
        || handGeared.model != handCounter.model || sent.model != handCounter.model
        || profile.model != handProfile.model {
        print("the loop and the hand-written baseline did different work")
        exit(1)
    }
    rendering.dispose()
    loop.dispose()
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

var rounds = 15
var tsv = false
var args = CommandLine.arguments.dropFirst().makeIterator()
while let arg = args.next() {
    switch arg {
    case "--rounds": rounds = Int(args.next() ?? "") ?? rounds
    case "--tsv": tsv = true
    default:
        print("usage: LoopBench [--rounds N] [--tsv]")
        exit(2)
    }
}

checkSameWork()

/// Per scenario, ns per event of each round: the library's, the baseline's, and the
/// baseline's queue and reducer with the library's Diffuser.
var library: [String: [Double]] = [:], hand: [String: [Double]] = [:], handDiffuser: [Double] = []
/// The floor of render-100: the hand-written queue and reducer with `FloorRender`.
var floorRender: [Double] = []
for _ in 0..<rounds {
    do {
        let (loop, rendering) = libraryRenderLoop()
        library["render-100", default: []].append(nsPerEvent(100_000) { loop.dispatch($0) })
        rendering.dispose()
        let baseline = handRenderLoop()
        hand["render-100", default: []].append(nsPerEvent(100_000) { baseline.dispatch($0) })
        let mixed = handDiffuserLoop()
        handDiffuser.append(nsPerEvent(100_000) { mixed.dispatch($0) })
        let floor = floorRenderLoop()
        floorRender.append(nsPerEvent(100_000) { floor.dispatch($0) })
    }
    do {
        let loop = libraryCounterLoop()
        library["no-render", default: []].append(nsPerEvent(500_000) { loop.dispatch($0) })
        let baseline = HandCounterLoop()
        hand["no-render", default: []].append(nsPerEvent(500_000) { baseline.dispatch($0) })
    }
    do {
        let loop = libraryProfileLoop()
        library["references", default: []].append(nsPerEvent(500_000) { loop.dispatch(Visit(count: $0, page: visitedPage)) })
        let baseline = HandProfileLoop()
        hand["references", default: []].append(nsPerEvent(500_000) { baseline.dispatch(Visit(count: $0, page: visitedPage)) })
    }
    do {
        let (loop, observing) = libraryObservedLoop()
        library["observed", default: []].append(nsPerEvent(200_000) { loop.dispatch(Visit(count: $0, page: visitedPage)) })
        observing.dispose()
        let baseline = HandProfileLoop(observed: true)
        hand["observed", default: []].append(nsPerEvent(200_000) { baseline.dispatch(Visit(count: $0, page: visitedPage)) })
    }
    do {
        let output = Output<Int>()
        let (loop, feeding) = librarySourceLoop(output)
        library["source", default: []].append(nsPerEvent(200_000) { output.send($0) })
        feeding.dispose()
        let (baseline, handFeeding) = handSourceLoop(output)
        hand["source", default: []].append(nsPerEvent(200_000) { output.send($0) })
        handFeeding.dispose()
        withExtendedLifetime((loop, baseline)) {}
    }
    do {
        // A gear each: the library's loop and the baseline are each its gear's one
        // subscriber.
        let gear = Gear<Int>()
        let loop = libraryGearLoop(gear)
        library["gear", default: []].append(nsPerEvent(200_000) { gear.send($0) })
        loop.dispose()
        let handGear = Gear<Int>()
        let (baseline, handGearing) = handGearLoop(handGear)
        hand["gear", default: []].append(nsPerEvent(200_000) { handGear.send($0) })
        handGearing.dispose()
        withExtendedLifetime(baseline) {}
    }
    do {
        let loop = libraryEffectsLoop()
        library["effects", default: []].append(nsPerEvent(500_000) { loop.dispatch($0) })
        let baseline = HandEffectsLoop()
        hand["effects", default: []].append(nsPerEvent(500_000) { baseline.dispatch($0) })
    }
    do {
        let (loop, job) = libraryJobLoop()
        library["job", default: []].append(nsPerEvent(200_000) { job.send($0) })
        let baseline = HandCounterLoop()
        hand["job", default: []].append(nsPerEvent(200_000) { baseline.dispatch($0) })
        withExtendedLifetime(loop) {}
    }
}

let scenarios = ["render-100", "no-render", "references", "observed", "source", "gear", "effects", "job"]
if tsv {
    // language, scenario, then median and min ns/event of: the library, hand,
    // hand+diffuser, the floor ("-" where it does not apply)
    for s in scenarios {
        let l = library[s]!, h = hand[s]!
        let render = s == "render-100"
        let mixed = render ? "\(median(handDiffuser))\t\(handDiffuser.min()!)" : "-\t-"
        let floor = render ? "\(median(floorRender))\t\(floorRender.min()!)" : "-\t-"
        print("swift\t\(s)\t\(median(l))\t\(l.min()!)\t\(median(h))\t\(h.min()!)\t\(mixed)\t\(floor)")
    }
} else {
    func cell(_ x: Double, _ width: Int) -> String {
        let s = String(Int(x.rounded()))
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
    func ratio(_ x: Double) -> String {
        let s = String(Double(Int(x * 100)) / 100)
        return String(repeating: " ", count: max(0, 8 - s.count)) + s
    }
    print("Loop Swift benchmark: events/s (median of \(rounds) interleaved rounds; best in the second column)")
    print("scenario       library ev/s        best   hand ev/s        best  x hand (time)   hand+diffuser ev/s")
    for s in scenarios {
        let l = library[s]!, h = hand[s]!
        let name = s + String(repeating: " ", count: 12 - s.count)
        let mixed = s == "render-100" ? cell(1e9 / median(handDiffuser), 21) : ""
        print("\(name)\(cell(1e9 / median(l), 15))\(cell(1e9 / l.min()!, 12))\(cell(1e9 / median(h), 12))"
              + "\(cell(1e9 / h.min()!, 12))\(ratio(median(l) / median(h)))\(mixed)")
    }
    print("render-100 floor (the 100 selectors called and compared by hand): \(Int((1e9 / median(floorRender)).rounded())) ev/s,"
          + " \(ratio(median(floorRender) / median(hand["render-100"]!))) x hand")
}
print("(sink \(sinkAccumulator % 1000))")
