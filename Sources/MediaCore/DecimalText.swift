/// `value` with exactly `digits` decimals, rounded, `-` for negatives (`-3.21`): the one way
/// KeyFrameKit writes a decimal in playlists, manifests, findings and messages (no locale, no
/// exponent).
package func fixed(_ value: Double, digits: Int) -> String {
    guard value.isFinite, abs(value) < 1e12 else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled) - whole * Int(scale)
    let fractionText = String(fraction)
    let padded = String(repeating: "0", count: max(0, digits - fractionText.count)) + fractionText
    return (value < 0 && scaled > 0 ? "-" : "") + "\(whole)" + (digits > 0 ? "." + padded : "")
}
