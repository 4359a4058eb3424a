import AssetJSON

/// Parses the UTF-8 of `text`.
func parse(_ text: String, _ options: JSONValue.ParseOptions = .strict) throws(JSONError) -> JSONValue {
    try JSONValue.parse(Array(text.utf8), options: options)
}

/// The error `bytes` is refused with, or `nil` when they parse.
func refusal(_ bytes: [UInt8], _ options: JSONValue.ParseOptions = .strict) -> JSONError? {
    do {
        _ = try JSONValue.parse(bytes, options: options)
        return nil
    } catch {
        return error
    }
}


/// Valid documents the mutation and comparison tests start from: every
/// kind of value, escapes, non-ASCII text, numbers of every shape.
let seedDocuments: [String] = [
    #"{"assetPackID":"Tutorial","downloadPolicy":{"prefetch":{"installationEventTypes":["firstInstallation"]}},"fileSelectors":[{"file":"Videos/Intro.m4v"},{"directory":"Levels","compression":"stored"}],"platforms":["iOS","linux"]}"#,
    #"[1,-0,0.5,-12.25e+3,6.02E23,1e-7,18446744073709551615,-9223372036854775808,true,false,null]"#,
    #"{"s":"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\uD83D\uDE00","é":"日本語","":[],"o":{}}"#,
    #"[[[[{"a":[{"b":[[1]]}]}]]]]"#,
    "\"\u{1F600} mixed \u{E9}\u{301} text\"",
    #"  {"k" : [ 1 , 2 ] , "l" : { "m" : null } }  "#,
]

/// Seeds in the manifest syntax: comments and trailing commas.
let commentedSeedDocuments: [String] = [
    """
    {
      // line comment
      "assetPackID": "Tutorial", /* block */
      "platforms": ["iOS", "linux",],
    }
    """,
    "/* a ** b */ [1, /**/ 2] // end",
]
