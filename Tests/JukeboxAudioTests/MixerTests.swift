// SPDX-License-Identifier: MIT
import Foundation
@testable import JukeboxAudio
import JukeboxFixtures
import JukeboxTestSupport
import XCTest

/// `AlsaMixer` against a user-space ALSA control device: a small external control plugin
/// (`<alsa/control_external.h>`) compiled here with `cc` and loaded by libasound from a configuration
/// string, so the real simple-mixer code (element lookup, TLV dB ranges, dB → step conversion,
/// switches) runs without a sound card. Its controls imitate real ones:
///
/// | control | steps | dB |
/// |---|---|---|
/// | Master (+ switch) | 0…31 | −46.5…0 in 1.5 dB steps |
/// | PCM | 0…255 | −51…0 in 0.2 dB steps |
/// | Digital | 0…207 | −103.5…0 in 0.5 dB steps, minimum = mute |
/// | Small | 0…40 | −20…0 (≤ 24 dB: linear in dB) |
/// | Headphone | 0…63 | none (raw linear) |
final class MixerTests: XCTestCase {
    private static let pluginSource = #"""
#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

struct ctl { const char *name; int boolean; long min, max; int tlv_min, tlv_step; long value[2]; };
/* Shared by every open in the process, so a second handle reads what the first wrote. */
static struct ctl ctls[] = {
    { "Master Playback Volume", 0, 0, 31, -4650, 150, {31, 31} },   /* 46.5 dB in 1.5 dB steps */
    { "Master Playback Switch", 1, 0, 1, 0, 0, {1, 1} },
    { "PCM Playback Volume", 0, 0, 255, -5100, 20, {255, 255} },     /* 51 dB in 0.2 dB steps */
    { "Digital Playback Volume", 0, 0, 207, -10350, 50 | 0x10000, {207, 207} }, /* 103.5 dB, min = mute */
    { "Small Playback Volume", 0, 0, 40, -2000, 50, {40, 40} },      /* 20 dB: linear in dB */
    { "Headphone Playback Volume", 0, 0, 63, 0, 0, {63, 63} },       /* no dB information */
};
#define N (sizeof(ctls) / sizeof(ctls[0]))

struct jb { snd_ctl_ext_t ext; int pipe[2]; };

static void jb_close(snd_ctl_ext_t *ext) { struct jb *j = ext->private_data; close(j->pipe[0]); close(j->pipe[1]); free(j); }
\#(ControlPlugin.lookup)
static int jb_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id) {
    (void)ext;
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, ctls[offset].name);
    return 0;
}
static int jb_attr(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc, unsigned int *count) {
    (void)ext;
    *type = ctls[key].boolean ? SND_CTL_ELEM_TYPE_BOOLEAN : SND_CTL_ELEM_TYPE_INTEGER;
    *acc = SND_CTL_EXT_ACCESS_READWRITE;
    if (ctls[key].tlv_step) *acc |= SND_CTL_EXT_ACCESS_TLV_READ | SND_CTL_EXT_ACCESS_TLV_CALLBACK;
    *count = 2;
    return 0;
}
static int jb_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *min, long *max, long *step) {
    (void)ext; *min = ctls[key].min; *max = ctls[key].max; *step = 1; return 0;
}
static int jb_read(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
    (void)ext; value[0] = ctls[key].value[0]; value[1] = ctls[key].value[1]; return 0;
}
static int jb_write(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value) {
    (void)ext;
    for (int c = 0; c < 2; c++) if (value[c] < ctls[key].min || value[c] > ctls[key].max) return -EINVAL;
    int changed = value[0] != ctls[key].value[0] || value[1] != ctls[key].value[1];
    ctls[key].value[0] = value[0]; ctls[key].value[1] = value[1];
    return changed;
}
static int jb_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *mask) { (void)ext; (void)id; (void)mask; return -EAGAIN; }
static int jb_tlv(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int op, unsigned int numid, unsigned int *tlv, unsigned int size) {
    (void)ext; (void)numid;
    if (op != 0) return -ENXIO;
    if (size < 4 * sizeof(unsigned int)) return -ENOMEM;
    tlv[0] = SND_CTL_TLVT_DB_SCALE; tlv[1] = 2 * sizeof(unsigned int);
    tlv[2] = (unsigned int)ctls[key].tlv_min; tlv[3] = (unsigned int)ctls[key].tlv_step;
    return 0;
}

static const snd_ctl_ext_callback_t callbacks = {
    .close = jb_close, .elem_count = jb_count, .elem_list = jb_list, .find_elem = jb_find,
    .get_attribute = jb_attr, .get_integer_info = jb_info, .read_integer = jb_read,
    .write_integer = jb_write, .read_event = jb_event,
};
"""#

    /// The compiled plugin, shared by all tests (its control values are process-wide, like a card's).
    private static let plugin = ControlPlugin.build(type: "jbmix", source: pluginSource, name: "Jukebox test mixer",
                                                    setup: "j->ext.tlv.c = jb_tlv;")

    private func open(_ control: String, index: Int = 0) throws -> AlsaMixer {
        let plugin: ControlPlugin
        switch Self.plugin {
        case .success(let p): plugin = p
        case .failure(let error): throw missingPeer(error.message)
        }
        return try AlsaMixer(device: plugin.device, control: control, index: index, config: plugin.config)
    }

    func testOpensControlsWithAndWithoutDBInformation() throws {
        let pcm = try open("PCM")
        XCTAssertTrue(pcm.hasDB)
        XCTAssertEqual(pcm.dBRange, -5100...0)
        XCTAssertEqual(pcm.rawRange, 0...255)
        XCTAssertFalse(pcm.hasSwitch)
        let master = try open("Master")
        XCTAssertTrue(master.hasSwitch)
        let headphone = try open("Headphone")
        XCTAssertFalse(headphone.hasDB)
        XCTAssertNil(headphone.dBRange)
        XCTAssertEqual(try open("Digital").dBRange, VolumeCurve.mute...0)
    }

    func testUnknownControlNamesTheOnesThatExist() throws {
        _ = try open("PCM") // skips without a compiler
        do {
            _ = try open("Speaker")
            XCTFail("opened a control that does not exist")
        } catch let error as MixerError {
            XCTAssertEqual(error.kind, .controlNotFound)
            XCTAssertEqual(Set(error.available), ["Master", "PCM", "Digital", "Small", "Headphone"])
            print("mixer: \(error.message)")
            XCTAssertTrue(error.message.contains("\"Speaker\""))
            XCTAssertTrue(error.message.contains("PCM"))
        }
        XCTAssertThrowsError(try open("PCM", index: 1))
    }

    func testUnknownCardSaysWhichCardsExist() {
        do throws(MixerError) {
            _ = try AlsaMixer(card: "NoSuchCard", control: "PCM")
            XCTFail("opened a card that does not exist")
        } catch {
            XCTAssertEqual(error.kind, .cardNotFound)
            XCTAssertTrue(error.message.hasPrefix("hw:CARD=NoSuchCard: cannot open its mixer"), error.message)
            XCTAssertEqual(error.available, AlsaMixer.cardNames())
            print("mixer: \(error.message)")
        }
        XCTAssertEqual(AlsaMixer.deviceName(card: "DAC"), "hw:CARD=DAC")
        XCTAssertEqual(AlsaMixer.deviceName(card: "1"), "hw:CARD=1")
        XCTAssertEqual(AlsaMixer.deviceName(card: "default"), "default")
        XCTAssertEqual(AlsaMixer.deviceName(card: "hw:0"), "hw:0")
    }

    /// For every percent: the step the control reaches is the one nearest the curve's dB value, steps
    /// never go down as the percent goes up, a second handle reads the same step (it reached the
    /// "hardware"), and `get()` reads back the percent within the control's resolution.
    func testEveryPercentLandsOnTheNearestStepOfTheCurve() throws {
        for (name, dBPerStep) in [("PCM", 20), ("Master", 150), ("Digital", 50), ("Small", 50), ("Headphone", 0)] {
            let mixer = try open(name)
            var lastRaw = Int.min
            var worst = 0
            for p in 0...100 {
                try mixer.set(percent: p)
                let raw = try XCTUnwrap(mixer.rawValue())
                XCTAssertEqual(try open(name).rawValue(), raw, "\(name) \(p)%: a second handle reads the same step")
                XCTAssertGreaterThanOrEqual(raw, lastRaw, "\(name) \(p)%: monotonic")
                lastRaw = raw
                let expected: Int
                if let dB = mixer.dBRange {
                    if p == 0 {
                        expected = 0
                    } else {
                        let target = VolumeCurve.dB(fraction: Double(p) / 100, min: dB.lowerBound, max: dB.upperBound).rounded()
                        let low = name == "Digital" ? -10350 : dB.lowerBound
                        expected = min(mixer.rawRange.upperBound, max(0, Int(((target - Double(low)) / Double(dBPerStep)).rounded())))
                    }
                } else {
                    expected = VolumeCurve.raw(fraction: Double(p) / 100, min: 0, max: mixer.rawRange.upperBound)
                }
                XCTAssertEqual(Double(raw), Double(expected), accuracy: 1, "\(name) \(p)%")
                let back = try XCTUnwrap(mixer.get())
                worst = max(worst, abs(back - p))
            }
            XCTAssertEqual(lastRaw, mixer.rawRange.upperBound, "\(name): 100 % is the top step")
            try mixer.set(percent: 0)
            XCTAssertEqual(mixer.get(), 0, name)
            print("mixer \(name): 0…100 % → steps \(mixer.rawRange), get() within \(worst) % of what was set")
            XCTAssertLessThanOrEqual(worst, name == "Master" ? 4 : 1, name)
            mixer.close()
            XCTAssertNil(mixer.get())
            XCTAssertThrowsError(try mixer.set(percent: 50))
        }
    }

    func testZeroTurnsTheSwitchOffAndAnyOtherValueOn() throws {
        let master = try open("Master")
        try master.set(percent: 0)
        XCTAssertEqual(master.get(), 0)
        XCTAssertEqual(master.rawValue(), 0)
        try master.set(percent: 1)
        XCTAssertGreaterThan(try XCTUnwrap(master.get()), 0)
        try master.set(percent: 100)
        XCTAssertEqual(master.get(), 100)
        XCTAssertEqual(master.rawValue(), 31)
    }

    func testEngineWithAMixerLeavesSamplesUntouched() throws {
        let mixer = try open("PCM")
        let scratch = try Scratch()
        let path = try scratch.audio(.wav16, frames: 3000)
        let source = try TestAudio.decode(path: path)
        let output = RecordingOutput()
        let log = ReportLog()
        let engine = AudioEngine(makeOutput: { output }, mixer: mixer, report: { log.append($0) })
        engine.setVolume(40)
        XCTAssertEqual(mixer.get(), 40)
        engine.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log.wait(for: .finished(id: 1)))
        engine.shutdown()
        XCTAssertEqual(output.bytes, source.bytes, "the mixer does the volume; samples stay bit-exact")
        // A mixer that fails hands the volume to the software gain.
        mixer.close()
        let quiet = RecordingOutput()
        let log2 = ReportLog()
        let engine2 = AudioEngine(makeOutput: { quiet }, mixer: mixer, report: { log2.append($0) })
        engine2.setVolume(40)
        engine2.play(id: 1, path: path, from: 0, paused: false)
        XCTAssertTrue(log2.wait(for: .finished(id: 1)))
        engine2.shutdown()
        XCTAssertNotEqual(quiet.bytes, source.bytes)
    }
}
