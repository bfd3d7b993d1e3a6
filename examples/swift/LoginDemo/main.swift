// The login demo: a Loop drives a login screen. A Fuser gathers the user's events from
// three widgets, the update reduces them into the model and asks for a login effect, an
// effect handler performs the login (simulated) and sends the answer back as an event,
// and a Diffuser renders each model, redrawing only the parts that changed.
//
//   swift run LoginDemo [--script FILE | --interactive] [--color | --no-color]
import Diffuser

#if canImport(Glibc)
import Glibc
#endif

/// What the session counts, for the summary at the end.
final class Counts {
    var eventsHandled = 0
    var effectsHandled = 0
    var modelsRendered = 0
}

/// Plays the session, from the script at `scriptPath` or typed (`interactive`).
func playSession(scriptPath: String, interactive: Bool, useColor: Bool) {
    let counts = Counts()
    let drawing = Drawing(useColor: useColor)

    // MARK: The effect handler: a simulated server, deterministic and immediate

    let server = EffectHandler<LoginEffect, LoginEvent> { effect, job in
        guard case .login(let username, let password) = effect else { return }
        let answer: LoginEvent = password == "opensesame" ? .loginAccepted : .loginRefused
        counts.effectsHandled += 1
        print("   \(pad("effect"))login \"\(username)\" -> sends \(answer.label)")
        job.send(answer)  // queued: handled after this step, as its own step
        job.finish()
    }

    // MARK: The loop: events -> update -> model -> screen; effects -> handler -> events

    let loop = Loop(
        model: LoginModel.initial,
        update: Update(update),
        handlers: [server],
        inspector: { trace in
            // Prints what the loop does: each start and each event, as the update sees it.
            switch trace {
            case .started:
                print("-- start")
            case .stepped(let event, _, let next):
                counts.eventsHandled += 1
                print("-- \(event.label)")
                if !next.hasModel { print("   no new model: nothing rendered") }
            default:
                break
            }
        },
        autostart: false
    )
    loop.render(makeScreen(drawing))
    loop.observe { _ in
        counts.modelsRendered += 1
        print("   \(drawing.renderedThisModel) of \(partNames.count) parts rendered")
        drawing.renderedThisModel = 0
    }

    let usernameField = TextField(), passwordField = TextField(), loginButton = Button()
    loop.connect(Fuser(
        .extract({ .usernameChanged($0) }, .fromFuseable(usernameField)),
        .extract({ .passwordChanged($0) }, .fromFuseable(passwordField)),
        .extractConstant(.loginClicked, .fromFuseable(loginButton))
    ))

    // MARK: The session: script lines (or typed lines) played on the widgets

    /// Plays one line on the widgets; returns false if the line is not understood.
    func play(_ line: String) -> Bool {
        let trimmed = line.drop { $0 == " " }
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return true }
        let word = trimmed.prefix { $0 != " " }
        let rest = String(trimmed.dropFirst(word.count).drop { $0 == " " })
        switch word {
        case "username": usernameField.type(rest)
        case "password": passwordField.type(rest)
        case "click": loginButton.tap()
        default: return false
        }
        return true
    }

    print("Login demo (Swift): a Loop updates the model, a Diffuser renders it, a Fuser gathers the user's events.")
    loop.start()
    if interactive {
        print("Type: username TEXT | password TEXT | click | quit")
        while true {
            print("> ", terminator: "")
            guard let line = readLine(), line != "quit" else { break }
            if !play(line) { print("   ? try: username alice | password opensesame | click") }
        }
    } else {
        guard let file = fopen(scriptPath, "r") else {
            print("cannot open script \(scriptPath)")
            exit(1)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            var line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            while line.hasSuffix("\n") || line.hasSuffix("\r") { line.removeLast() }
            if !play(line) {
                print("bad script line: \(line)")
                exit(1)
            }
        }
        fclose(file)
    }
    loop.dispose()  // disconnects the widgets

    let total = partNames.reduce(0) { $0 + drawing.renders[$1, default: 0] }
    let models = counts.modelsRendered
    print("Renders per part over \(models) models (a naive renderer redraws every part of every model):")
    for part in partNames {
        print("   \(pad(part))\(drawing.renders[part, default: 0]) of \(models)")
    }
    let naive = models * partNames.count
    print("   \(pad("total"))\(total) of \(naive) (\((naive - total) * 100 / naive)% fewer draws)")
    print("Loop: events handled: \(counts.eventsHandled) (\(counts.eventsHandled - counts.effectsHandled) from the widgets, "
          + "\(counts.effectsHandled) sent back by the effect handler); effects handled: \(counts.effectsHandled)")
}

var scriptPath = "examples/login.script"
var interactive = false
var useColor = isatty(1) != 0
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--script": scriptPath = arguments.next() ?? scriptPath
    case "--interactive": interactive = true
    case "--color": useColor = true
    case "--no-color": useColor = false
    default:
        print("usage: LoginDemo [--script FILE | --interactive] [--color | --no-color]")
        exit(2)
    }
}
playSession(scriptPath: scriptPath, interactive: interactive, useColor: useColor)
