// The login demo: a Diffuser renders a login screen, redrawing only the parts that
// changed; a Fuser gathers the user's events (from three widgets) into one stream.
//
//   swift run LoginDemo [--script FILE | --interactive] [--color | --no-color]
import Diffuser

#if canImport(Glibc)
import Glibc
#endif

// MARK: Model and update (pure)

struct Header: Equatable {
    var title: String
    var subtitle: String
}

struct LoginModel: Equatable {
    var header = Header(title: "Welcome back", subtitle: "Sign in to continue")
    var hints: [String] = []
    var username = ""
    var password = ""
    var button = "disabled"

    static var initial: LoginModel {
        var model = LoginModel()
        model.validate()
        return model
    }

    mutating func validate() {
        hints = []
        if username.isEmpty { hints.append("username is required") }
        if password.count < 8 { hints.append("password needs 8+ characters") }
        button = hints.isEmpty ? "enabled" : "disabled"
    }
}

enum LoginEvent {
    case usernameChanged(String)
    case passwordChanged(String)
    case loginClicked
}

func update(_ model: LoginModel, _ event: LoginEvent) -> LoginModel {
    var next = model
    switch event {
    case .usernameChanged(let name):
        next.username = name
        next.header.subtitle = name.isEmpty ? "Sign in to continue" : "Signing in as \(name)"
        next.validate()
    case .passwordChanged(let password):
        next.password = password
        next.validate()
    case .loginClicked:
        guard model.button == "enabled" else { return model }
        if model.password == "opensesame" {
            next.header.title = "Hello, \(model.username)!"
            next.header.subtitle = "You are signed in"
            next.button = "signed in"
        } else {
            next.header.subtitle = "Wrong password, try again"
            next.password = ""
            next.validate()
        }
    }
    return next
}

// MARK: Widgets: event sources

/// A text field: its edits reach whoever is connected to its output.
final class TextField: Fuseable {
    let output = Output<String>()
    func type(_ text: String) { output.send(text) }
}

/// A button: its taps reach whoever is connected to its output.
final class Button: Fuseable {
    let output = Output<Void>()
    func tap() { output.send(()) }
}

// MARK: Rendering

var useColor = isatty(1) != 0
let partNames = ["header.title", "header.subtitle", "body.hints", "field.username", "field.password", "button.login"]
var renders = [String: Int]()
var renderedThisStep = 0

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

/// The effect of one part: draws it (highlighted) and counts the render.
func draw(_ part: String) -> (String) -> Void {
    { text in
        renders[part, default: 0] += 1
        renderedThisStep += 1
        let line = "   \(pad(part, 17))\(text)"
        print(useColor ? "\u{1B}[1;33m\(line)\u{1B}[0m" : line)
    }
}

let screen = Diffuser<LoginModel>(
    .map(\.header, .intoAll(
        .map(\.title, .into(draw("header.title"))),
        .map(\.subtitle, .into(draw("header.subtitle")))
    )),
    .map({ $0.hints.isEmpty ? "ready" : $0.hints.joined(separator: "; ") }, .into(draw("body.hints"))),
    .map({ "\"\($0.username)\"" }, .into(draw("field.username"))),
    .map({ "\"" + String(repeating: "*", count: $0.password.count) + "\"" }, .into(draw("field.password"))),
    .map(\.button, .into { draw("button.login")("( Log in ) \($0)") })
)

// MARK: The loop: events -> model -> screen

let usernameField = TextField(), passwordField = TextField(), loginButton = Button()
let events = Fuser<LoginEvent>(
    .extract({ .usernameChanged($0) }, .fromFuseable(usernameField)),
    .extract({ .passwordChanged($0) }, .fromFuseable(passwordField)),
    .extractConstant(.loginClicked, .fromFuseable(loginButton))
)

var model = LoginModel.initial
var steps = 0

func step(_ label: String, _ body: () -> Void) {
    print("-- \(label)")
    renderedThisStep = 0
    body()
    steps += 1
    print("   \(renderedThisStep) of \(partNames.count) parts rendered")
}

/// Plays one script line on the widgets; returns false if the line is not understood.
func play(_ line: String) -> Bool {
    let trimmed = line.drop { $0 == " " }
    if trimmed.isEmpty || trimmed.hasPrefix("#") { return true }
    let word = trimmed.prefix { $0 != " " }
    let rest = trimmed.dropFirst(word.count).drop { $0 == " " }
    switch word {
    case "username": step("username \"\(rest)\"") { usernameField.type(String(rest)) }
    case "password": step("password \"\(rest)\"") { passwordField.type(String(rest)) }
    case "click": step("click") { loginButton.tap() }
    default: return false
    }
    return true
}

var scriptPath = "examples/login.script"
var interactive = false
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

print("Login demo (Swift): a Diffuser renders the screen, a Fuser gathers the user's events.")
let connection = events.connect { event in
    model = update(model, event)
    screen.run(model)
}
step("start") { screen.run(model) }

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
        var line = String(cString: buffer)
        while line.hasSuffix("\n") || line.hasSuffix("\r") { line.removeLast() }
        if !play(line) {
            print("bad script line: \(line)")
            exit(1)
        }
    }
    fclose(file)
}
connection.dispose()

let total = partNames.reduce(0) { $0 + renders[$1, default: 0] }
print("Renders per part over \(steps) steps (a naive renderer redraws every part at every step):")
for part in partNames {
    print("   \(pad(part, 17))\(renders[part, default: 0]) of \(steps)")
}
let naive = steps * partNames.count
print("   \(pad("total", 17))\(total) of \(naive) (\((naive - total) * 100 / naive)% fewer draws)")
