/* A flat C API over libmgba, so the Rust side never depends on the layout of `struct mCore`
 * (5,480 bytes of fields and function pointers that change between mGBA versions). */
#include <mgba/flags.h> /* must come first: it fixes the layout of the structs below */
#include <mgba/core/core.h>
#include <mgba/core/log.h>
#include <mgba/core/timing.h>
#include <mgba/core/config.h>
#include <mgba/debugger/debugger.h>
#include <mgba/internal/debugger/gdb-stub.h>
#include <mgba-util/socket.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 240
#define HEIGHT 160

typedef void (*shim_log_fn)(int level, const char *category, const char *message);

struct shim {
	struct mCore *core;
	uint32_t pixels[WIDTH * HEIGHT];
	struct GDBStub *gdb;
};

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
	return s;
}

/* Loads (and keeps writing) the cartridge save from `path`, so SRAM survives across runs like a real save file. */
int shim_load_save(struct shim *s, const char *path) {
	return mCoreLoadSaveFile(s->core, path, false) ? 0 : -1;
}

void shim_reset(struct shim *s) {
	s->core->reset(s->core);
}

void shim_run_frame(struct shim *s) {
	if (s->gdb) {
		mDebuggerRunFrame(&s->gdb->d);
	} else {
		s->core->runFrame(s->core);
	}
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
	s->core->unloadROM(s->core);
	s->core->deinit(s->core);
	free(s);
}
