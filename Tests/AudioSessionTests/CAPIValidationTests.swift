import AudioSessionC
import CAudioSessionAPI
import Testing

/// The C API's answers to bad input, without PipeWire: codes and sentences, never a trap.
@Suite struct CAPIValidationTests {
    @Test func aDeclarationIsValidatedAsThePolicyDoes() throws {
        let s = try #require(as_session_new("capi-test"))
        defer { as_session_free(s) }
        #expect(as_session_set_category(s, AS_CATEGORY_PLAYBACK, AS_MODE_SPOKEN_AUDIO, UInt32(AS_OPTION_DUCK_OTHERS)) == 0)
        #expect(String(cString: as_session_last_error(s)) == "")
        let r = as_session_set_category(s, AS_CATEGORY_RECORD, AS_MODE_DEFAULT, UInt32(AS_OPTION_DUCK_OTHERS))
        #expect(r == Int32(AS_ERROR_INCOMPATIBLE_CATEGORY.rawValue))
        #expect(String(cString: as_error_name(r)) == "incompatibleCategory")
        #expect(String(cString: as_session_last_error(s)).contains("duckOthers"))
        #expect(as_session_set_category(s, AS_CATEGORY_PLAYBACK, AS_MODE_VOICE_CHAT, 0) == Int32(AS_ERROR_INCOMPATIBLE_CATEGORY.rawValue))
    }

    @Test func outOfRangeInputIsABadParam() throws {
        let bad = Int32(AS_ERROR_BAD_PARAM.rawValue)
        #expect(as_session_set_category(nil, AS_CATEGORY_PLAYBACK, AS_MODE_DEFAULT, 0) == bad)
        #expect(as_session_set_active(nil, true, 0) == bad)
        #expect(as_session_dispatch(nil) == bad)
        let s = try #require(as_session_new(nil))
        defer { as_session_free(s) }
        #expect(as_session_set_category(s, as_category(rawValue: 99), AS_MODE_DEFAULT, 0) == bad)
        #expect(as_session_set_category(s, AS_CATEGORY_PLAYBACK, as_mode(rawValue: 1000), 0) == bad)
        #expect(as_session_set_category(s, AS_CATEGORY_PLAYBACK, AS_MODE_DEFAULT, 1 << 20) == bad)
        #expect(as_session_set_active(s, false, 0x80) == bad)
        #expect(as_output_new(s, "x", 48000, 2, false, nil, nil) == nil)
        #expect(String(cString: as_session_last_error(s)).contains("render function"))
        #expect(String(cString: as_category_name(as_category(rawValue: 42))) == "unknown")
        #expect(String(cString: as_mode_name(AS_MODE_VOICE_PROMPT)) == "voicePrompt")
        #expect(String(cString: as_route_change_reason_name(AS_ROUTE_CHANGE_OLD_DEVICE_UNAVAILABLE)) == "oldDeviceUnavailable")
        as_session_free(nil)
        as_output_free(nil)
        as_route_free(nil)
    }

    /// The preferences are declared; an override to a speaker that is not there is refused
    /// with the rule's sentence, and an unknown override is a bad parameter.
    @Test func preferencesAndTheOutputOverride() throws {
        let s = try #require(as_session_new("capi-test"))
        defer { as_session_free(s) }
        #expect(as_session_set_prefers_no_interruptions_from_system_alerts(s, true) == 0)
        #expect(as_session_set_prefers_interruption_on_route_disconnect(s, true) == 0)
        #expect(as_session_override_output_port(s, AS_PORT_OVERRIDE_SPEAKER) == Int32(AS_ERROR_BAD_PARAM.rawValue))
        #expect(String(cString: as_session_last_error(s)).contains("no built-in speaker"))
        #expect(as_session_override_output_port(s, as_port_override(rawValue: 7)) == Int32(AS_ERROR_BAD_PARAM.rawValue))
        #expect(as_session_override_output_port(s, AS_PORT_OVERRIDE_NONE) == 0)
        #expect(as_input_new(s, "x", 48000, 1, false, nil, nil) == nil)
        #expect(String(cString: as_session_last_error(s)).contains("capture function"))
        as_input_free(nil)
    }

    /// Nothing waits before anything happened: dispatch delivers nothing, and the
    /// descriptor is a real one.
    @Test func aNewSessionHasNothingToDispatch() throws {
        let s = try #require(as_session_new("capi-test"))
        defer { as_session_free(s) }
        #expect(as_session_get_fd(s) >= 0)
        #expect(as_session_dispatch(s) == 0)
        let route = try #require(as_session_copy_current_route(s))
        as_route_free(route)
    }
}
