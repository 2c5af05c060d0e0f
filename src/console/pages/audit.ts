// PLACEHOLDER owned by helper C3: replace this file entirely.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function registerAuditPage(_scope: FastifyInstance, _services: Services): void {}
