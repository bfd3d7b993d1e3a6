// The widgets: event sources with outputs a Fuser connects to.
import Diffuser

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
