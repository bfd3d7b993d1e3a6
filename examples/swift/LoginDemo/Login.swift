// The login screen's model, its events and effects, and the update: pure, no I/O.
import Diffuser

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

    /// Recomputes the hints and whether the button may be clicked.
    mutating func validate() {
        hints = []
        if username.isEmpty { hints.append("username is required") }
        if password.count < 8 { hints.append("password needs 8+ characters") }
        button = hints.isEmpty ? "enabled" : "disabled"
    }
}

/// What happens to the screen: the user's edits and clicks, and the server's answers
/// (sent back by the effect handler).
enum LoginEvent {
    case usernameChanged(String)
    case passwordChanged(String)
    case loginClicked
    case loginAccepted
    case loginRefused

    /// How the demo prints the event (the same text in every language).
    var label: String {
        switch self {
        case .usernameChanged(let name): return "username \"\(name)\""
        case .passwordChanged(let password): return "password \"\(password)\""
        case .loginClicked: return "click"
        case .loginAccepted: return "login accepted"
        case .loginRefused: return "login refused"
        }
    }
}

/// What the update asks the world to do.
enum LoginEffect: Equatable {
    case login(username: String, password: String)
}

/// What each event does to the model, and which effects it asks for. A click on a
/// disabled button changes nothing: no new model, nothing published.
func update(_ model: LoginModel, _ event: LoginEvent) -> Next<LoginModel, LoginEffect> {
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
        guard model.button == "enabled" else { return .noChange }
        next.button = "signing in"
        return .next(next, effects: [.login(username: model.username, password: model.password)])
    case .loginAccepted:
        next.header.title = "Hello, \(model.username)!"
        next.header.subtitle = "You are signed in"
        next.button = "signed in"
    case .loginRefused:
        next.header.subtitle = "Wrong password, try again"
        next.password = ""
        next.validate()
    }
    return .next(next)
}
