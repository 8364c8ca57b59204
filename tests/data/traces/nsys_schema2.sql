-- Nsight Systems SQLite export fixture, schema 2.x (EXPORT_META_DATA). CREATE TABLE statements are the real
-- export schema (Nsight Systems 2022.2 schema 2.9.1; no MEMSET and no NVTX_EVENTS table, as in exports of captures without them); rows are hand-made. The unit test builds a database from this file.
-- Expected: see tests/unit/interop_nsys_test.cpp.
CREATE TABLE EXPORT_META_DATA (
    -- information about nsys export process

    name                        TEXT      NOT NULL,                    -- Name of export meta-data record
    value                       TEXT                                   -- Value of export meta-data record
);

CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);

CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,                               -- UTC Epoch timestamp at start of the capture (ns).
    utcTime                     TEXT,                                  -- Start of the capture in UTC.
    localTime                   TEXT                                   -- Start of the capture in local time of target.
);

CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,                    -- Serialized GlobalId.
    id                          INTEGER   NOT NULL,                    -- Device ID.
    name                        TEXT,                                  -- Device name.
    busLocation                 TEXT,                                  -- PCI bus location.
    isDiscrete                  INTEGER,                               -- True if discrete, false if integrated.
    l2CacheSize                 INTEGER,                               -- Size of L2 cache (B).
    totalMemory                 INTEGER,                               -- Total amount of memory on the device (B).
    memoryBandwidth             INTEGER,                               -- Amount of memory transferred (B).
    clockRate                   INTEGER,                               -- Clock frequency (Hz).
    smCount                     INTEGER,                               -- Number of multiprocessors on the device.
    pwGpuId                     INTEGER,                               -- PerfWorks GPU ID.
    uuid                        TEXT,                                  -- Device UUID.
    luid                        INTEGER,                               -- Device LUID.
    chipName                    TEXT,                                  -- Chip name.
    cuDevice                    INTEGER,                               -- CUDA device ID.
    ctxswDevPath                TEXT,                                  -- GPU context switch device node path.
    ctrlDevPath                 TEXT,                                  -- GPU control device node path.
    revision                    INTEGER,                               -- Revision number.
    nodeMask                    INTEGER,                               -- Device node mask.
    constantMemory              INTEGER,                               -- Memory available on device for __constant__ variables (B).
    maxIPC                      INTEGER,                               -- Maximum instructions per count.
    maxRegistersPerBlock        INTEGER,                               -- Maximum number of 32-bit registers available per block.
    maxShmemPerBlock            INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerBlockOptin       INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerSm               INTEGER,                               -- Maximum shared memory available per multiprocessor (B).
    maxRegistersPerSm           INTEGER,                               -- Maximum number of 32-bit registers available per multiprocessor.
    threadsPerWarp              INTEGER,                               -- Warp size in threads.
    asyncEngines                INTEGER,                               -- Number of asynchronous engines.
    maxWarpsPerSm               INTEGER,                               -- Maximum number of warps per multiprocessor.
    maxBlocksPerSm              INTEGER,                               -- Maximum number of blocks per multiprocessor.
    maxThreadsPerBlock          INTEGER,                               -- Maximum number of threads per block.
    maxBlockDimX                INTEGER,                               -- Maximum X-dimension of a block.
    maxBlockDimY                INTEGER,                               -- Maximum Y-dimension of a block.
    maxBlockDimZ                INTEGER,                               -- Maximum Z-dimension of a block.
    maxGridDimX                 INTEGER,                               -- Maximum X-dimension of a grid.
    maxGridDimY                 INTEGER,                               -- Maximum Y-dimension of a grid.
    maxGridDimZ                 INTEGER,                               -- Maximum Z-dimension of a grid.
    computeMajor                INTEGER,                               -- Major compute capability version number.
    computeMinor                INTEGER,                               -- Minor compute capability version number.
    smMajor                     INTEGER,                               -- Major multiprocessor version number.
    smMinor                     INTEGER                                -- Minor multiprocessor version number.
);

CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER   REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId), -- ID used to identify the API call that launched the event.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- StringId of the kernel name
    shortName                   INTEGER   NOT NULL,                    -- StringId of the short function name without arguments.
    mangledName                 INTEGER,                               -- StringId of the mangled function name.
    launchType                  INTEGER,                               -- Launch type of the kernel. See docs for specifics.
    cacheConfig                 INTEGER,                               -- Cache configuration used for the kernel. See enum CUfunc_cache.
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId), -- CUDA graph node creation ID.
    sharedMemoryLimitConfig     INTEGER                                -- Shared memory limit per block config. See enum CUpti_FuncShmemLimitConfig.
);

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER   REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId), -- ID used to identify the API call that launched the event.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- Type of the memory copy. See enum CUDA_MEMCPY_KIND.
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- Source memory kind See enum CUDA_MEMOPR_MEMORY_KIND.
    dstKind                     INTEGER,                               -- Destination memory kind. See enum CUDA_MEMOPR_MEMORY_KIND.
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- UVM migration cause ID. See CUpti_ActivityUnifiedMemoryMigrationCause.
    graphNodeId                 INTEGER   REFERENCES CUDA_GRAPH_EVENTS(graphNodeId), -- CUDA graph node creation ID.
    virtualAddress              INTEGER                                -- Virtual base address of the page/s being transferred.
);

INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_VERSION', '2022.2.1.31');
INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_SCHEMA_VERSION', '2.9.1');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1684406205000000000, '2023-05-18T10:36:45', '2023-05-18T03:36:45');
INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, 0, 'NVIDIA A100-SXM4-40GB');
INSERT INTO StringIds VALUES (1, 'add(int, float *, float *)');
INSERT INTO StringIds VALUES (101, 'add');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId) VALUES (100, 1100, 0, 1, 7, 1, 20703084544, 1, 101, 32, 1, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind) VALUES (0, 50, 0, 1, 7, 2, 20703084544, 65536, 11);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind) VALUES (1200, 1300, 0, 1, 7, 3, 20703084544, 65536, 12);
