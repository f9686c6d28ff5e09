#pragma once
// Every ZooKeeper client record in one include: handshake, headers, requests, responses, multi.

#include "jute/connect.h"
#include "jute/data.h"
#include "jute/headers.h"
#include "jute/multi.h"
#include "jute/requests.h"
#include "jute/responses.h"
