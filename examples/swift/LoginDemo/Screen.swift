// The screen: a Diffuser of six parts, each drawn (printed) only when its text changed,
// and the counts of what was drawn.
import Diffuser

#if canImport(Glibc)
import Glibc
#endif

var useColor = isatty(1) != 0
let partNames = ["header.title", "header.subtitle", "body.hints", "field.username", "field.password", "button.login"]
/// Draws per part, over the whole session.
var renders = [String: Int]()
/// Draws since the last model was rendered in full.
var renderedThisModel = 0

func pad(_ s: String, _ width: Int = 17) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

/// The effect of one part: draws it (highlighted) and counts the draw.
func draw(_ part: String) -> (String) -> Void {
    { text in
        renders[part, default: 0] += 1
        renderedThisModel += 1
        let line = "   \(pad(part))\(text)"
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
    .map({ "( Log in ) \($0.button)" }, .into(draw("button.login")))
)
