/* A flat C API over libmgba, so the Rust side never depends on the layout of `struct mCore`
 * (5,480 bytes of fields and function pointers that change between mGBA versions). */
#include <mgba/flags.h> /* must come first: it fixes the layout of the structs below */
#include <mgba/core/core.h>
#include <mgba/core/blip_buf.h>
#include <mgba/core/log.h>
#include <mgba/core/timing.h>
#include <mgba/core/config.h>
#include <mgba/debugger/debugger.h>
#include <mgba/internal/debugger/gdb-stub.h>
#include <mgba/internal/arm/arm.h>
#include <mgba-util/socket.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 240
#define HEIGHT 160
#define SHIM_AUDIO_RATE 32768

typedef void (*shim_log_fn)(int level, const char *category, const char *message);

struct shim {
	struct mCore *core;
	uint32_t pixels[WIDTH * HEIGHT];
	struct GDBStub *gdb;
	/* The CPU's own byte store, which `sram_store8` wraps to count (and cut) SRAM writes. */
	void (*store8)(struct ARMCore *, uint32_t address, int8_t value, int *cycles);
	uint64_t sram_writes;
	/* SRAM writes still let through before the cut; negative: no cut. */
	int64_t sram_left;
};

/* The open emulators of this thread: a CPU's byte store finds its shim here. An emulator runs on the thread
 * that opened it (the Rust side is not Send), so no lock is needed. */
#define MAX_PER_THREAD 8
static _Thread_local struct shim *open_shims[MAX_PER_THREAD];

/* Every byte store of the CPU: SRAM (0x0E000000-0x0FFFFFFF, an 8-bit bus, written a byte at a time) is counted,
 * and once the cut is reached its writes are dropped, as a power cut would leave it. */
static void sram_store8(struct ARMCore *cpu, uint32_t address, int8_t value, int *cycles) {
	struct shim *s = NULL;
	for (int i = 0; i < MAX_PER_THREAD; ++i) {
		if (open_shims[i] && open_shims[i]->core->cpu == cpu) {
			s = open_shims[i];
		}
	}
	if (s && address >> 25 == 0x0E >> 1) {
		if (s->sram_left == 0) {
			return;
		}
		if (s->sram_left > 0) {
			--s->sram_left;
		}
		++s->sram_writes;
	}
	s->store8(cpu, address, value, cycles);
}

static shim_log_fn log_callback;

/* Called on the thread that runs the frame; the Rust side keeps one buffer per thread. */
static void shim_logger(struct mLogger *logger, int category, enum mLogLevel level, const char *format, va_list args) {
	(void) logger;
	if (!log_callback) {
		return;
	}
	char message[512];
	vsnprintf(message, sizeof(message), format, args);
	log_callback((int) level, mLogCategoryId(category), message);
}

static struct mLogger logger = { .log = shim_logger };

void shim_set_logger(shim_log_fn callback) {
	log_callback = callback;
	mLogSetDefaultLogger(&logger);
}

struct shim *shim_open(const char *path) {
	struct shim *s = calloc(1, sizeof(*s));
	if (!s) {
		return NULL;
	}
	s->core = mCoreFind(path);
	if (!s->core || !s->core->init(s->core)) {
		free(s);
		return NULL;
	}
	mCoreInitConfig(s->core, NULL);
	s->core->setVideoBuffer(s->core, (color_t *) s->pixels, WIDTH);
	if (!mCoreLoadFile(s->core, path)) {
		s->core->deinit(s->core);
		free(s);
		return NULL;
	}
	s->core->reset(s->core);
	/* The audio output rate. 32,768 Hz is the rate the GBA's own mixer runs at with SOUNDBIAS's resolution at its
	 * reset value (one sample every 512 cycles; mGBA 0.10 mixes at that interval), so blip_buf turns each mixed
	 * sample into exactly one output sample: nothing is resampled, and a frame (280,896 cycles) is exactly 548.625
	 * samples. mGBA's own default is 96,000 Hz, about 1,607 samples a frame, close to the 2,048 (its audio buffer
	 * size) at which it stops mixing into the buffers. The rates live in the blip buffers, which a reset clears
	 * but does not re-rate. */
	int32_t clock = s->core->frequency(s->core);
	for (int ch = 0; ch < 2; ++ch) {
		blip_set_rates(s->core->getAudioChannel(s->core, ch), clock, SHIM_AUDIO_RATE);
	}
	int slot = 0;
	while (slot < MAX_PER_THREAD && open_shims[slot]) {
		++slot;
	}
	if (slot == MAX_PER_THREAD) {
		s->core->unloadROM(s->core);
		s->core->deinit(s->core);
		free(s);
		return NULL;
	}
	open_shims[slot] = s;
	struct ARMCore *cpu = s->core->cpu;
	s->store8 = cpu->memory.store8;
	cpu->memory.store8 = sram_store8;
	s->sram_left = -1;
	return s;
}

/* Loads (and keeps writing) the cartridge save from `path`, so SRAM survives across runs like a real save file. */
int shim_load_save(struct shim *s, const char *path) {
	return mCoreLoadSaveFile(s->core, path, false) ? 0 : -1;
}

void shim_reset(struct shim *s) {
	s->core->reset(s->core);
	s->sram_left = -1;
}

uint64_t shim_sram_writes(struct shim *s) { return s->sram_writes; }
/* From now on `left` more SRAM byte writes go through, then none until the next reset; -1: no cut. */
void shim_cut_sram_after(struct shim *s, int64_t left) { s->sram_left = left; }

/* The whole cartridge save (SRAM), copied out or replaced; the copy is freed with shim_free. */
size_t shim_sram_clone(struct shim *s, void **out) { return s->core->savedataClone(s->core, out); }
int shim_sram_restore(struct shim *s, const void *data, size_t size) {
	return s->core->savedataRestore(s->core, data, size, true) ? 0 : -1;
}
void shim_free(void *p) { free(p); }

/* The machine's whole state (CPU, memory, I/O; not the save), as mGBA's save states hold it. */
size_t shim_state_size(struct shim *s) { return s->core->stateSize(s->core); }
int shim_save_state(struct shim *s, void *state) { return s->core->saveState(s->core, state) ? 0 : -1; }
int shim_load_state(struct shim *s, const void *state) { return s->core->loadState(s->core, state) ? 0 : -1; }

void shim_run_frame(struct shim *s) {
	if (s->gdb) {
		mDebuggerRunFrame(&s->gdb->d);
	} else {
		s->core->runFrame(s->core);
	}
}

/* Moves up to `max` stereo samples (left, right, interleaved) of what mGBA mixed so far into `out`; returns how
 * many. mGBA (0.10, gba/audio.c) makes a sample available once each 2,048-cycle block of the mix is complete and
 * keeps the rest for later, so nothing is cut at a frame's end; but once 2,048 samples are waiting (its audio
 * buffer size) it drops what it mixes next, so the caller reads every frame, about 549 samples. Both channels are
 * mixed and made available together; the smaller count is read from both all the same. */
int shim_read_audio(struct shim *s, int16_t *out, int max) {
	struct blip_t *left = s->core->getAudioChannel(s->core, 0);
	struct blip_t *right = s->core->getAudioChannel(s->core, 1);
	int n = blip_samples_avail(left);
	if (blip_samples_avail(right) < n) {
		n = blip_samples_avail(right);
	}
	if (n > max) {
		n = max;
	}
	blip_read_samples(left, out, n, 1);
	blip_read_samples(right, out + 1, n, 1);
	return n;
}

void shim_set_keys(struct shim *s, uint32_t keys) {
	s->core->setKeys(s->core, keys);
}

uint32_t shim_read8(struct shim *s, uint32_t address) { return s->core->busRead8(s->core, address); }
uint32_t shim_read16(struct shim *s, uint32_t address) { return s->core->busRead16(s->core, address); }
uint32_t shim_read32(struct shim *s, uint32_t address) { return s->core->busRead32(s->core, address); }
void shim_write8(struct shim *s, uint32_t address, uint8_t value) { s->core->busWrite8(s->core, address, value); }
void shim_write32(struct shim *s, uint32_t address, uint32_t value) { s->core->busWrite32(s->core, address, value); }

uint64_t shim_cycles(struct shim *s) {
	return mTimingGlobalTime(s->core->timing);
}

/* The last frame, 240x160 pixels in mGBA's native 32-bit format (XBGR8888: red in the low byte). */
const uint32_t *shim_pixels(struct shim *s) {
	return s->pixels;
}

/* mGBA's GDB stub acknowledges a packet ("+") and then sends its reply, two small writes: with Nagle's algorithm the
 * reply waits for gdb's delayed ACK of the first, 43 ms a packet (a 68-byte memory read, measured; `mgba -g` the same).
 * Its callbacks for a stop (`paused`) and for a running game (`update`) are wrapped to set TCP_NODELAY on a connection
 * first seen, before they serve it: every stop at a breakpoint or an interrupt then answers at once (4 096 bytes read in
 * 0.008 s instead of 2.7 s, measured). The stop at reset is the exception: the stub accepts gdb inside that `paused`
 * call and serves it there until gdb continues, so its packets still wait. */
static _Thread_local void (*stub_paused)(struct mDebugger *);
static _Thread_local void (*stub_update)(struct mDebugger *);
static _Thread_local Socket stub_nodelay = INVALID_SOCKET;

static void set_nodelay(struct mDebugger *d) {
	/* `d` is the stub's first member. A connection is set once; when it closes, the next one is new. */
	Socket connection = ((struct GDBStub *) d)->connection;
	if (connection != stub_nodelay && connection != INVALID_SOCKET) {
		SocketSetTCPPush(connection, 1);
	}
	stub_nodelay = connection;
}
static void paused_nodelay(struct mDebugger *d) {
	set_nodelay(d);
	stub_paused(d);
}
static void update_nodelay(struct mDebugger *d) {
	set_nodelay(d);
	stub_update(d);
}

/* Serves the GDB protocol on `address:port` (127.0.0.1 in our tools, never every interface). */
int shim_gdb_listen(struct shim *s, uint16_t port, const char *address) {
	struct Address bind = { .version = IPV4 };
	if (inet_pton(AF_INET, address, &bind.ipv4) != 1) {
		return -1;
	}
	bind.ipv4 = ntohl(bind.ipv4);
	s->gdb = calloc(1, sizeof(*s->gdb));
	if (!s->gdb) {
		return -1;
	}
	GDBStubCreate(s->gdb);
	stub_paused = s->gdb->d.paused;
	stub_update = s->gdb->d.update;
	if (stub_paused) {
		s->gdb->d.paused = paused_nodelay;
	}
	if (stub_update) {
		s->gdb->d.update = update_nodelay;
	}
	if (!GDBStubListen(s->gdb, port, &bind, GDB_WATCHPOINT_STANDARD_LOGIC)) {
		free(s->gdb);
		s->gdb = NULL;
		return -1;
	}
	mDebuggerAttach(&s->gdb->d, s->core);
	mDebuggerEnter(&s->gdb->d, DEBUGGER_ENTER_ATTACHED, NULL);
	return 0;
}

/* True while a gdb client is connected (the stub drops back to "detached" when it disconnects). */
int shim_gdb_attached(struct shim *s) {
	return s->gdb && s->gdb->d.state != DEBUGGER_SHUTDOWN && s->gdb->connection != INVALID_SOCKET;
}

void shim_close(struct shim *s) {
	if (s->gdb) {
		/* Detach through the core: mDebuggerAttach(d, NULL) dereferences the NULL core (mGBA 0.10). */
		s->core->detachDebugger(s->core);
		GDBStubShutdown(s->gdb);
		free(s->gdb);
	}
	for (int i = 0; i < MAX_PER_THREAD; ++i) {
		if (open_shims[i] == s) {
			open_shims[i] = NULL;
		}
	}
	s->core->unloadROM(s->core);
	s->core->deinit(s->core);
	free(s);
}
