// The screen: a Diffuser of six parts, each drawn (printed) only when its text changed,
// and the counts of what was drawn.
import Diffuser

let partNames = ["header.title", "header.subtitle", "body.hints", "field.username", "field.password", "button.login"]

func pad(_ s: String, _ width: Int = 17) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

/// What the screen drew: per part over the session, and since the last model was
/// rendered in full. The screen's effects, which run on the loop's thread, write it.
final class Drawing {
    let useColor: Bool
    private(set) var renders = [String: Int]()
    var renderedThisModel = 0

    init(useColor: Bool) {
        self.useColor = useColor
    }

    /// The effect of one part: draws it (highlighted) and counts the draw.
    func draw(_ part: String) -> (String) -> Void {
        { text in
            self.renders[part, default: 0] += 1
            self.renderedThisModel += 1
            let line = "   \(pad(part))\(text)"
            print(self.useColor ? "\u{1B}[1;33m\(line)\u{1B}[0m" : line)
        }
    }
}

/// The screen's Diffuser, drawing into `drawing`.
func makeScreen(_ drawing: Drawing) -> Diffuser<LoginModel> {
    Diffuser<LoginModel>(
        .map(\.header, .intoAll(
            .map(\.title, .into(drawing.draw("header.title"))),
            .map(\.subtitle, .into(drawing.draw("header.subtitle")))
        )),
        .map({ $0.hints.isEmpty ? "ready" : $0.hints.joined(separator: "; ") }, .into(drawing.draw("body.hints"))),
        .map({ "\"\($0.username)\"" }, .into(drawing.draw("field.username"))),
        .map({ "\"" + String(repeating: "*", count: $0.password.count) + "\"" }, .into(drawing.draw("field.password"))),
        .map({ "( Log in ) \($0.button)" }, .into(drawing.draw("button.login")))
    )
}
