#!/usr/bin/env node
'use strict';
// `npm run schema`: writes uyuni.schema.json from the configuration's superstruct
// schema (src/config/json-schema.ts). test/config-schema.test.ts keeps the committed file in step.
const fs = require('fs');
const path = require('path');

require('../bin/register.js');
const { configSchema } = require('../src/config/schema.ts');
const { CONFIG_SCHEMA_FILE, configJsonSchema } = require('../src/config/json-schema.ts');

const file = path.join(__dirname, '..', CONFIG_SCHEMA_FILE);
fs.writeFileSync(file, `${JSON.stringify(configJsonSchema(configSchema), null, 2)}\n`);
console.error(`wrote ${CONFIG_SCHEMA_FILE}`);
